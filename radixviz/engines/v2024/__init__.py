"""The first release's radix cache (SGLang 22085081bb, January 2024), with the #7 switch.

The engine: ``engine.py`` (behind the facade's verbs), ``cache.py`` (what the code pane shows),
``node.py``, ``cache_heap.py``, ``invariants.py``, ``preview.py``; its script operations
(``ops.py``: the matcher switch and the release's insert), its loop hooks (``sim.py``). Imports
nothing: the registry loads each part by name (radixviz/cache/engines.py).
"""
