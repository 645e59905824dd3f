"""SGLang v0.5.23's unified radix tree: one tree whose nodes hold data per component (Full KV,
sliding-window KV, Mamba state), each with its own pool, locks, sizes and eviction.

``cache.UnifiedRadixCache`` is the cache; docs/engines/unified.md describes the wing.
This ``__init__`` imports nothing, so loading the package loads neither torch nor the engine.
"""
