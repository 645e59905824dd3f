"""Test helpers for the unified engine: its independent reference, and one reading of both trees
and both sets of pools in the same format, to compare after every step.

The reference lives in ``tests/oracles/naive_unified*.py``, written from the shape of SGLang
v0.5.23's files. Times are compared as ranks (the engine counts integer ticks, the reference
SGLang's floats), node ids by path (the reference counts ids as SGLang does, sentinels too),
SWA boundary stamps from each one's first.
"""
from __future__ import annotations

from oracles.naive_unified import RefUnifiedCache
from oracles.naive_unified_nodes import MAMBA, SWA, child_key as ref_child_key

__all__ = ["RefUnifiedCache", "path_of", "pools_of_engine", "pools_of_reference", "tree_of"]

REF_UUID_BASE = 100_000_000_000_000  # SGLang numbers SWA stamps from here


def path_of(node) -> tuple:
    """The edges from the root down to ``node`` (either tree)."""
    edges = []
    while node.parent is not None:
        edges.append(tuple(node.key))
        node = node.parent
    return tuple(reversed(edges))


def _dense_ranks(times: list) -> list:
    order = sorted(set(times))
    rank = {t: i for i, t in enumerate(order)}
    return [rank[t] for t in times]


def tree_of(root, types: tuple, page: int, uuid_base: int = 0) -> tuple:
    """(nested node tuples, access-time ranks, creation-time ranks), children by child key."""
    rows, stamps = [], []

    def walk(node):
        parts = []
        for ct in types:
            cd = node.component_data[ct]
            value = None if cd.value is None else tuple(cd.value.reshape(-1).tolist())
            uuid = getattr(cd, "uuid", None) if hasattr(cd, "uuid") else cd.metadata.get("uuid")
            parts.append((value, cd.lock_ref, None if uuid is None else uuid - uuid_base))
        stamps.append((node.last_access_time, node.creation_time))
        kids = sorted(node.children.items(), key=lambda item: repr(item[0]))
        return (tuple(node.key), tuple(parts), node.hit_count, node.priority,
                tuple((repr(k), walk(child)) for k, child in kids))

    shape = walk(root)
    rows = _dense_ranks([a for a, _ in stamps]), _dense_ranks([c for _, c in stamps])
    return shape, rows


def ref_tree(ref: RefUnifiedCache) -> tuple:
    return tree_of(ref.core.root, ref.types, ref.core.page, REF_UUID_BASE)


def engine_tree(engine) -> tuple:
    return tree_of(engine.root_node, engine.tree_components, engine.page_size)


def pools_of_engine(engine) -> tuple:
    alloc = engine.token_to_kv_pool_allocator
    if engine.swa_enabled:
        pools = (alloc.full_attn_allocator.free_slots(), alloc.swa_attn_allocator.free_slots(),
                 tuple(alloc.full_to_swa_index_mapping.tolist()))
    else:
        pools = (alloc.free_slots(), None, None)
    mamba = engine.mamba_pool
    if mamba is None:
        return pools + (None, None)
    return pools + (tuple(mamba.free_slots.tolist()), tuple(map(tuple, mamba.states.tolist())))


def pools_of_reference(ref: RefUnifiedCache) -> tuple:
    if SWA in ref.types:
        pools = (tuple(ref.pools.full.slots()), tuple(ref.pools.swa.slots()), tuple(ref.pools.mapping))
    else:
        pools = (tuple(ref.pools.slots()), None, None)
    if MAMBA not in ref.types:
        return pools + (None, None)
    return pools + (tuple(ref.mamba_alloc.free), tuple(map(tuple, ref.mamba_alloc.states.tolist())))


def ref_lookup(ref: RefUnifiedCache, path: tuple):
    """The reference's node at ``path`` (edges from the root)."""
    node = ref.core.root
    for edge in path:
        node = node.children[ref_child_key(list(edge), ref.core.page)]
    return node
