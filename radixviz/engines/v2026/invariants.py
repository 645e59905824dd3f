"""Checks that today's tree is consistent: pages, locks, sizes, hit counts, priorities, leaves,
namespaces and page hashes."""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.invariants import InvariantError, check_lock_flows, check_pool, node_label as _label
from radixviz.cache.hashes import compute_node_hash_values
from radixviz.cache.keys import get_child_key

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import torch

    from radixviz.cache.pool import TokenToKVPool
    from .node import TreeNode


def check_modern_invariants(cache, pool: TokenToKVPool | None = None,
                            held: Iterable[torch.Tensor | Sequence[int]] = ()) -> None:
    """Raise InvariantError on the first broken invariant of a 2026 RadixCache.

    ``pool`` and ``held`` as for ``check_invariants``: every slot's pool count must equal the
    node that owns it plus the running requests that hold it.
    """
    root, page = cache.root_node, cache.page_size
    if root.parent is not None or root.key != () or root.lock_ref != 1:
        raise InvariantError("the root must have no parent, an empty key and its one permanent lock")
    evictable = protected = 0
    candidates, stack = set(), [root]
    owner: dict = {}
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
        _check_node(node, page, cache._clock)
        if cache.enable_kv_events and node.hash_value is None:
            raise InvariantError(f"{_label(node)}: KV events are on but its pages were never hashed")
        if node.lock_ref == 0:
            evictable += len(node.key)
            if not node.children:
                candidates.add(node)
        else:
            protected += len(node.key)
        for slot in node.value.tolist():
            if slot in owner:
                raise InvariantError(f"slot {slot} is owned by both {_label(owner[slot])} and {_label(node)}")
            # the node: named only when a check fails (a label made for every slot took 2% of
            # the CPU of the tests a change to the 2024 engine's _split_node picks)
            owner[slot] = node
    check_lock_flows(root, lambda n: n.lock_ref)
    if (evictable, protected) != (cache.evictable_size(), cache.protected_size()):
        raise InvariantError(f"sizes say evictable {cache.evictable_size()}, protected "
                             f"{cache.protected_size()}; the nodes hold {evictable} and {protected}")
    if candidates != set(cache.evictable_leaves):
        raise InvariantError("the eviction candidates are not exactly the unlocked leaves")
    if pool is not None:
        check_pool(pool, owner, held)


def _check_node(node: TreeNode, page: int, clock: int) -> None:
    parent = node.parent
    if len(node.key) % page:
        raise InvariantError(f"{_label(node)}: {len(node.key)} tokens is not whole pages of {page}")
    slots = 0 if node.value is None else int(node.value.numel())
    if slots != len(node.key):
        raise InvariantError(f"{_label(node)}: {len(node.key)} tokens but {slots} slots")
    if node.lock_ref < 0:
        raise InvariantError(f"{_label(node)}: negative lock_ref {node.lock_ref}")
    if parent.parent is not None and parent.lock_ref < node.lock_ref:
        raise InvariantError(f"{_label(node)}: lock_ref {node.lock_ref} exceeds its parent's {parent.lock_ref}")
    # every insert that raised a node's count or priority passed through its parent too
    if node.hit_count < 1 or (parent.parent is not None and parent.hit_count < node.hit_count):
        raise InvariantError(f"{_label(node)}: hit_count {node.hit_count} (parent {parent.hit_count})")
    if parent.priority < node.priority:
        raise InvariantError(f"{_label(node)}: priority {node.priority} above its parent's {parent.priority}")
    if not (0 < node.creation_time <= clock and 0 < node.last_access_time <= clock):
        raise InvariantError(f"{_label(node)}: times outside the clock ({clock})")
    if node.hash_value is not None and parent.hash_value is not None \
            and list(node.hash_value) != compute_node_hash_values(node, page):
        raise InvariantError(f"{_label(node)}: its page hashes are not its pages' chained SHA-256")
