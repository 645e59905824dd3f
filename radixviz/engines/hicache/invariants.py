"""Checks that the two-tier tree is consistent: both pools, locks, sizes, both candidate sets."""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.invariants import InvariantError, check_lock_flows, check_pool, node_label as _label
from radixviz.cache.hashes import compute_node_hash_values
from radixviz.cache.keys import get_child_key

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import torch

    from radixviz.cache.pool import TokenToKVPool
    from .cache import HiRadixCache
    from .cache_host_pool import TokenToKVPoolHost
    from .node import TreeNode


def check_hicache_invariants(cache, pool: TokenToKVPool | None = None,
                             held: Iterable[torch.Tensor | Sequence[int]] = ()) -> None:
    """Raise InvariantError on the first broken invariant of a HiRadixCache.

    Every node has a copy on at least one tier and each copy has one slot per token; a node
    without a device copy has none below it and no lock; the host pool's used slots are
    exactly the nodes' host slots; the sizes, both eviction candidate sets and the copies in
    flight agree with the nodes. ``pool`` and ``held`` as for ``check_invariants``.
    """
    root, page = cache.root_node, cache.page_size
    if root.parent is not None or root.key != () or root.lock_ref != 1 or root.evicted or not root.backuped:
        raise InvariantError("the root must have no parent, an empty key, its one permanent lock, "
                             "and count as on both tiers")
    evictable = protected = 0
    device_leaves, host_leaves = set(), set()
    owner: dict[int, TreeNode] = {}   # slot -> the node holding it, per tier
    host_owner: dict[int, TreeNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for first, child in node.children.items():
            if child.parent is not node:
                raise InvariantError(f"{_label(child)}: parent link does not point at the node holding it")
            if not child.key or first != get_child_key(child.key, page, 0, child.extra_key):
                raise InvariantError(f"{_label(child)}: filed under {first!r} but its edge starts differently")
            if node is not root and child.extra_key != node.extra_key:
                raise InvariantError(f"{_label(child)}: namespace {child.extra_key!r} under a node "
                                     f"of namespace {node.extra_key!r}")
            stack.append(child)
        if node is root:
            continue
        _check_node(node, page)
        if cache.enable_kv_events and node.hash_value is None:
            raise InvariantError(f"{_label(node)}: KV events are on but its pages were never hashed")
        if node.hash_value is not None and node.parent.hash_value is not None \
                and list(node.hash_value) != compute_node_hash_values(node, page):
            raise InvariantError(f"{_label(node)}: its page hashes are not its pages' chained SHA-256")
        if node.evicted:
            if node.lock_ref == 0 and not any(c.backuped for c in node.children.values()):
                host_leaves.add(node)
        else:
            if node.lock_ref == 0:
                evictable += len(node.key)
                if all(c.evicted for c in node.children.values()):
                    device_leaves.add(node)
            else:
                protected += len(node.key)
            for slot in node.value.tolist():
                if slot in owner:
                    raise InvariantError(f"slot {slot} is owned by both {_label(owner[slot])} and {_label(node)}")
                # the node: named only when a check fails (a label made for every slot took 2% of
                # the CPU of the tests a change to the 2024 engine's _split_node picks)
                owner[slot] = node
        if node.backuped:
            for slot in node.host_value.tolist():
                if slot in host_owner:
                    raise InvariantError(f"host slot {slot} is owned by both {_label(host_owner[slot])} and {_label(node)}")
                host_owner[slot] = node
    check_lock_flows(root, lambda n: n.lock_ref)
    if (evictable, protected) != (cache.evictable_size(), cache.protected_size()):
        raise InvariantError(f"sizes say evictable {cache.evictable_size()}, protected "
                             f"{cache.protected_size()}; the device copies hold {evictable} and {protected}")
    if device_leaves != set(cache.evictable_leaves):
        raise InvariantError("the device eviction candidates are not exactly the unlocked nodes on "
                             "the device with no child there")
    if host_leaves != set(cache.evictable_host_leaves):
        raise InvariantError("the host eviction candidates are not exactly the host-only nodes with "
                             "no child on the host")
    _check_host_pool(cache.token_to_kv_pool_host, host_owner)
    _check_in_flight(cache)
    if pool is not None:
        check_pool(pool, owner, held)


def _check_node(node: TreeNode, page: int) -> None:
    parent = node.parent
    if len(node.key) % page:
        raise InvariantError(f"{_label(node)}: {len(node.key)} tokens is not whole pages of {page}")
    if node.evicted and not node.backuped:
        raise InvariantError(f"{_label(node)}: neither on the device nor on the host")
    for name, slots in (("device", node.value), ("host", node.host_value)):
        if slots is not None and int(slots.numel()) != len(node.key):
            raise InvariantError(f"{_label(node)}: {len(node.key)} tokens but {int(slots.numel())} {name} slots")
    if node.evicted and node.lock_ref:
        raise InvariantError(f"{_label(node)}: locked ({node.lock_ref}) with no device copy")
    if not node.evicted and parent.evicted:
        raise InvariantError(f"{_label(node)}: on the device below {_label(parent)}, which is not")
    if node.lock_ref < 0 or node.host_ref_counter < 0:
        raise InvariantError(f"{_label(node)}: negative lock_ref {node.lock_ref} or host_ref {node.host_ref_counter}")
    # (SGLang's hierarchical insert never raises the root's priority: it starts at the root's children)
    if parent.parent is not None and parent.priority < node.priority:
        raise InvariantError(f"{_label(node)}: priority {node.priority} above its parent's {parent.priority}")


def _check_host_pool(host: TokenToKVPoolHost, host_owner: dict) -> None:
    free = host.free_slots.tolist()
    if len(set(free)) != len(free):
        raise InvariantError("a host slot is in the free queue twice")
    taken = set(range(host.size)) - set(free)
    if taken != set(host_owner):
        stray = sorted(taken ^ set(host_owner))[0]
        where = _label(host_owner[stray]) if stray in host_owner else "no node"
        raise InvariantError(f"host slot {stray}: {'free' if stray not in taken else 'in use'} in the "
                             f"host pool but {where} holds it")


def _check_in_flight(cache: HiRadixCache) -> None:
    for node_id, node in cache.ongoing_write_through.items():
        if node.id != node_id or not node.backuped:
            raise InvariantError(f"write in flight for {_label(node)}, which has no host slots")
        if node.lock_ref < 1:  # write-backs are acknowledged before their eviction returns
            raise InvariantError(f"{_label(node)}: a write in flight must hold a lock")
    for node_id, node in cache.ongoing_load_back.items():
        if node.id != node_id or node.evicted or node.lock_ref < 1:
            raise InvariantError(f"load in flight for {_label(node)}, which is not locked on the device")
