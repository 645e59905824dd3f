"""Challenges: a goal the learner reaches by driving the cache, graded by the engine. The
file format and playing (``challenge``), the goal conditions (``goals``).
"""
