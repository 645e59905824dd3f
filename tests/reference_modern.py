"""Test helpers for the 2026 engine: its independent reference and ways to compare the two.

The reference lives in ``tests/oracles/naive_modern.py`` (it is also the benchmark baseline),
written straight from the shape of SGLang's ``radix_cache.py`` of March 2026; this module
reads the engine's live tree in the reference's format.
"""
from __future__ import annotations

from oracles.naive_modern import NaiveModernRadixCache

__all__ = ["NaiveModernRadixCache", "modern_structure", "path_keys"]


def modern_structure(node, with_keys: bool = False) -> tuple:
    """The same nested tuples as ``NaiveModernRadixCache.structure``, from the engine's nodes
    (``with_keys``: namespaces, page hashes and the keys children are filed under too)."""
    head = (tuple(node.key), tuple(node.value.tolist()), node.lock_ref, node.hit_count,
            node.priority, node.creation_time, node.last_access_time)
    if with_keys:
        hashes = None if node.hash_value is None else tuple(node.hash_value)
        return head + (node.extra_key, hashes,
                       tuple((filed, modern_structure(child, True)) for filed, child in node.children.items()))
    return head + (tuple(modern_structure(child) for child in node.children.values()),)


def path_keys(root, node) -> tuple:
    """The edges from ``root`` down to ``node`` (works for either cache)."""
    edges = []
    while node is not root:
        edges.append(tuple(node.key))
        node = node.parent
    return tuple(reversed(edges))
