"""Views of snapshots: Rich renderables for the terminal and Graphviz diagrams for teachers.

Everything here reads immutable snapshots (``TreeSnapshot``, ``PoolSnapshot``, ``Frame``), never
live nodes, so any earlier step can be drawn again.
"""
