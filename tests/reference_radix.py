"""Test helpers: the independent reference cache and ways to compare it with the engine.

The reference lives in ``tests/oracles/naive_radix.py`` (it is also the benchmark baseline);
this module adds a pool model written from the scheduler's rules.
"""
from __future__ import annotations

from oracles.naive_radix import NaiveRadixCache, common_length

__all__ = ["NaiveRadixCache", "common_length", "engine_structure", "engine_path_keys",
           "PoolModel", "fresh_snapshot"]


def engine_structure(node) -> tuple:
    """The same shape as ``NaiveRadixCache.structure``, read from the engine's live nodes."""
    return (tuple(node.key), tuple(node.value.tolist()), node.ref_counter, node.last_access_time,
            tuple(engine_structure(child) for child in node.children.values()))


def engine_path_keys(cache, node) -> tuple:
    """The edges from the engine's root down to ``node``."""
    edges = []
    while node is not cache.root_node:
        edges.append(tuple(node.key))
        node = node.parent
    return tuple(reversed(edges))


def fresh_snapshot(node):
    """A NodeSnapshot built from scratch, ignoring every cached snapshot."""
    from radixviz.cache import NodeSnapshot

    kids = tuple(fresh_snapshot(child) for child in node.children.values())
    value = tuple(node.value.tolist()) if node.value is not None else ()
    return NodeSnapshot(node.id, node.key, value, node.ref_counter, node.last_access_time,
                        kids, len(node.key) + sum(k.subtree_tokens for k in kids))


class PoolModel:
    """Slot reference counts as a plain list: alloc takes the lowest free slots."""

    def __init__(self, size: int):
        self.counts = [0] * size

    def alloc(self, n: int):
        free = [i for i, c in enumerate(self.counts) if c == 0][:n]
        if len(free) < n:
            return None
        for i in free:
            self.counts[i] += 1
        return free

    def free(self, slots) -> int:
        slots = list(slots)
        for s in slots:
            assert self.counts[s] > 0, f"model: slot {s} freed while free"
            self.counts[s] -= 1
        return sum(1 for s in set(slots) if self.counts[s] == 0)

    def add_refs(self, slots) -> None:
        for s in slots:
            assert self.counts[s] > 0, f"model: slot {s} shared while free"
            self.counts[s] += 1

    def available(self) -> int:
        return self.counts.count(0)
