"""Checks that the unified tree and its pools agree: v0.5.23's ``sanity_check`` (tree shape,
per-node state, leaf set, LRU lists, sizes) on the device tier, plus the pools' accounting,
which SGLang checks elsewhere: no slot owned twice, none both owned and free, each SWA value
the pairing of its node's Full slots, and (given what requests hold) every slot accounted for.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Protocol

import torch

from ...cache.invariants import InvariantError, check_lock_flows, node_label
from ...cache.keys import get_child_key
from .cache_pools import SWATokenToKVPoolAllocator
from .node import BASE_COMPONENT_TYPE, ComponentType

if TYPE_CHECKING:
    from .cache_pools import MambaPool, TokenToKVPoolAllocator
    from .cache_tree import UnifiedTreeCore
    from .node import UnifiedTreeNode

FULL, SWA, MAMBA = ComponentType.FULL, ComponentType.SWA, ComponentType.MAMBA


class UnifiedRadixCache(Protocol):
    """The parts of the cache (cache.py) these checks read."""

    tree_core: UnifiedTreeCore
    page_size: int
    tree_components: tuple
    token_to_kv_pool_allocator: TokenToKVPoolAllocator | SWATokenToKVPoolAllocator
    mamba_pool: MambaPool | None


def check_unified_invariants(cache: UnifiedRadixCache, held: dict | None = None) -> None:
    """Raise InvariantError on the first broken invariant. ``held``: ComponentType -> the
    slots running requests hold as their own, not the tree's (Full slot tensors, Mamba
    slots); given, every slot of every pool must be free, the tree's or a request's, once."""
    tree, page = cache.tree_core, cache.page_size
    root = tree.root_node
    if getattr(root, "parent", None) is not None or root.key != () or any(root.component_data[ct].lock_ref < 1 for ct in tree.component_types):
        raise InvariantError("the root must have no parent, an empty key and its permanent lock")
    owned: dict = {ct: Counter() for ct in tree.component_types}
    sizes = {ct: [0, 0] for ct in tree.component_types}
    leaves: set = set()
    with_data: dict = {ct: set() for ct in tree.component_types}
    stack = [root]
    while stack:
        node = stack.pop()
        for filed, child in node.children.items():
            if child.parent is not node:
                raise InvariantError(f"{node_label(child)}: its parent link does not point at the node holding it")
            if not child.key or filed != get_child_key(child.key, page):
                raise InvariantError(f"{node_label(child)}: filed under {filed!r} but its edge starts differently")
            stack.append(child)
        if node is root:
            continue
        _check_node(cache, node, page)
        for ct in tree.component_types:
            cd = node.component_data[ct]
            if cd.value is None:
                continue
            with_data[ct].add(node.id)
            owned[ct].update(cd.value.tolist())
            sizes[ct][cd.lock_ref > 0] += tree.components_by_type[ct].reclaimable_value_len(node)
        if tree._is_device_leaf(node):
            leaves.add(node)
    check_lock_flows(root, lambda n: n.component_data[FULL].lock_ref)
    for ct in tree.component_types:
        twice = [slot for slot, n in owned[ct].items() if n > 1]
        if twice:
            raise InvariantError(f"{ct} slot {twice[0]} is owned by two nodes")
        have = (tree.component_evictable_size(ct), tree.component_protected_size(ct))
        if have != tuple(sizes[ct]):
            raise InvariantError(f"{ct} sizes say evictable {have[0]}, protected {have[1]}; "
                                 f"the nodes hold {sizes[ct][0]} and {sizes[ct][1]}")
        if ct != BASE_COMPONENT_TYPE:
            _check_lru(tree.lru_lists[ct], with_data[ct], ct)
    if leaves != tree.evictable_device_leaves:
        raise InvariantError("the evictable leaves are not exactly the unlocked leaves holding Full KV")
    _check_pools(cache, owned, held)


def _check_node(cache: UnifiedRadixCache, node: UnifiedTreeNode, page: int) -> None:
    if len(node.key) % page:
        raise InvariantError(f"{node_label(node)}: {len(node.key)} tokens is not whole pages of {page}")
    full = node.component_data[FULL]
    if full.value is None or full.value.numel() != len(node.key):
        raise InvariantError(f"{node_label(node)}: its Full KV must cover its {len(node.key)} tokens")
    for ct in cache.tree_components:
        cd = node.component_data[ct]
        if cd.lock_ref < 0:
            raise InvariantError(f"{node_label(node)}: negative {ct} lock")
        if full.lock_ref < cd.lock_ref:
            raise InvariantError(f"{node_label(node)}: Full lock {full.lock_ref} below its {ct} lock {cd.lock_ref}")
    swa = node.component_data[SWA].value
    if swa is not None:
        alloc = cache.token_to_kv_pool_allocator
        assert isinstance(alloc, SWATokenToKVPoolAllocator)
        if swa.tolist() != alloc.translate_loc_from_full_to_swa(full.value).tolist():
            raise InvariantError(f"{node_label(node)}: its SWA slots are not its Full slots' SWA peers")
    state = node.component_data[MAMBA].value
    if state is not None and state.numel() != 1:
        raise InvariantError(f"{node_label(node)}: a Mamba state is one slot")


def _check_lru(lru, expected: set, ct: ComponentType) -> None:
    if set(lru.cache) != expected:
        raise InvariantError(f"the {ct} LRU list holds {sorted(lru.cache)}, the nodes with {ct} data are {sorted(expected)}")
    pt, seen = lru._pt, 0
    prev, x = lru.head, lru.head.lru_next[lru._pt]
    while x is not lru.tail:
        if x is None or x.lru_prev[pt] is not prev or x.id not in lru.cache:
            raise InvariantError(f"the {ct} LRU list is broken after node #{prev.id}")
        seen += 1
        if seen > len(lru.cache):
            raise InvariantError(f"the {ct} LRU list loops")
        prev, x = x, x.lru_next[pt]
    if seen != len(lru.cache):
        raise InvariantError(f"the {ct} LRU list links {seen} nodes but records {len(lru.cache)}")


def _check_pools(cache: UnifiedRadixCache, owned: dict, held: dict | None) -> None:
    alloc = cache.token_to_kv_pool_allocator
    full_alloc = alloc.full_attn_allocator if isinstance(alloc, SWATokenToKVPoolAllocator) else alloc
    pools = [(FULL, full_alloc.free_slots(), range(full_alloc.page_size, (full_alloc.num_pages + 1) * full_alloc.page_size))]
    if isinstance(alloc, SWATokenToKVPoolAllocator):
        swa_alloc = alloc.swa_attn_allocator
        pools.append((SWA, swa_alloc.free_slots(), range(swa_alloc.page_size, (swa_alloc.num_pages + 1) * swa_alloc.page_size)))
    if cache.mamba_pool is not None:
        pools.append((MAMBA, tuple(cache.mamba_pool.free_slots.tolist()), range(1, cache.mamba_pool.size + 1)))
    for ct, free, every in pools:
        free_count = Counter(free)
        if any(n > 1 for n in free_count.values()):
            raise InvariantError(f"the {ct} pool lists a free slot twice")
        both = set(free_count) & set(owned[ct])
        if both:
            raise InvariantError(f"{ct} slot {min(both)} is both free and owned by a node")
        if held is None:
            continue
        uses = Counter(owned[ct]) + free_count
        for slots in held.get(ct, ()):
            uses.update(slots.reshape(-1).tolist() if isinstance(slots, torch.Tensor) else list(slots))
        if ct == SWA:  # a request's SWA slots are the live pairings of its own Full slots
            for slots in held.get(FULL, ()):
                peers = alloc.translate_loc_from_full_to_swa(slots).tolist()  # type: ignore[union-attr]
                uses.update(peer for peer in peers if peer > 0)
        lost = [slot for slot in every if uses[slot] != 1]
        if lost:
            raise InvariantError(f"{ct} slot {lost[0]} is accounted {uses[lost[0]]} times (free, tree, requests)")
