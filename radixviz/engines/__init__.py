"""The engines, one wing each: everything only one engine uses, under the same file names.

``v2024/`` the first release's cache (SGLang, January 2024), ``v2026/`` today's (March 2026),
``hicache/`` today's with a host-memory tier. A wing's file belongs to the layer of its role,
told by its name (``cache*``, ``node``, ``invariants``, ``preview``, ``snapshot``, ``engine``:
torch only; ``ops``, ``narrate``: the script layer; ``views*``: Rich and Graphviz, no Textual;
``sim``: the simulation; ``quiz*``, ``checks``: lessons), as tests/test_layers.py checks.

Shared code imports no wing: it asks the registry (radixviz/cache/engines.py, the one list of
wings), which loads a wing's modules by name on first use. This package and each wing's
``__init__`` import nothing, so loading one part (the quiz's questions, a column's title) loads
neither torch nor the engine. See docs/architecture.md.
"""
