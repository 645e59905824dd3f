"""Test oracles: plain re-readings of SGLang's radix caches in their own shape, sharing no code
with ``radixviz.cache``. The differential tests hold the engines to them step for step, and
``bench/`` times the engines against them (bench imports them from here, never the reverse).

- ``naive_radix``: the first release's cache (22085081bb), with the pre-#7 matcher switch;
- ``naive_modern``: SGLang's cache of March 2026 (9fbe6800a): pages, eviction policies,
  lock_ref, hit counts, priorities;
- ``eager_tree``: the tree view as it was drawn in one walk of every node, before its rows
  were built lazily (render/tree_rows.py must draw the same lines).
"""
