"""The hierarchical cache (SGLang's ``hiradix_cache.py``, 9fbe6800a): a device and a host tier,
built on today's cache (the v2026 wing).

The engine: ``engine.py`` (behind the facade's verbs, and the host tier's own), ``cache.py``,
``cache_transfers.py``, ``cache_controller.py``, ``cache_host_pool.py``, ``cache_leaves.py``,
``cache_head_bugs.py``, ``node.py``, ``invariants.py``, ``preview.py``, ``snapshot.py``; its script
operations (``ops.py``) and words (``narrate.py``), views (``views.py``, ``views_pool.py``,
``views_tiers.py``, ``views_head_bugs.py``, ``views_sim_report.py``), loop hooks and
``simulate`` (``sim.py``), quiz questions (``quiz.py``, ``quiz_head_bugs.py``) and lesson counts
(``checks.py``). Imports nothing: the registry loads each part by name (radixviz/cache/engines.py).
"""
