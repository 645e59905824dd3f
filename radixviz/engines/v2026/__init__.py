"""Today's radix cache (SGLang 9fbe6800a, March 2026): pages, eviction policies, lock_ref,
namespaces, page hashes and KV events.

The engine: ``engine.py`` (behind the facade's verbs), ``cache.py`` (in the shape of SGLang's
``radix_cache.py``), ``node.py``, ``cache_candidates.py``, ``cache_watched.py``,
``cache_kv_record.py``, ``invariants.py``, ``preview.py``, ``snapshot.py``; its script
operations and words (``ops.py``), views (``views.py``), loop hooks and ``simulate`` (``sim.py``),
quiz questions (``quiz.py``) and lesson counts (``checks.py``). Imports nothing: the registry
loads each part by name (radixviz/cache/engines.py).
"""
