"""Checks that the first release's tree (and the pool under it) are consistent."""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.invariants import InvariantError, check_lock_flows, check_pool, node_label as _label
from radixviz.cache.keys import get_child_key

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import torch

    from radixviz.cache.pool import TokenToKVPool
    from .node import TreeNode


def check_invariants(cache, pool: TokenToKVPool | None = None,
                  held: Iterable[torch.Tensor | Sequence[int]] = ()) -> None:
    """Raise InvariantError on the first broken invariant.

    ``held`` lists the slot tensors running requests hold outside the tree (their own
    new tokens and the references they added to the tree's slots).
    """
    root = cache.root_node
    if root.parent is not None or root.key != ():
        raise InvariantError("the root must have no parent and an empty key")
    evictable = 0
    owner: dict = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for first, child in node.children.items():
            if child.parent is not node:
                raise InvariantError(f"{_label(child)}: parent link does not point at the node holding it")
            if not child.key or get_child_key(child.key) != first:
                raise InvariantError(f"{_label(child)}: filed under token {first!r} but its edge starts differently")
            stack.append(child)
        if node is root:
            continue
        if _slot_count(node) != len(node.key):
            raise InvariantError(f"one slot per token: {_label(node)} has {len(node.key)} tokens "
                                 f"but {_slot_count(node)} slots")
        if node.ref_counter < 0:
            raise InvariantError(f"{_label(node)}: negative reference count {node.ref_counter}")
        parent = node.parent
        # the root's permanent reference is not a lock, so it bounds nothing
        if parent is not root and parent.ref_counter < node.ref_counter:
            raise InvariantError(f"{_label(node)}: reference count {node.ref_counter} exceeds its "
                                 f"parent's {parent.ref_counter}")
        if node.ref_counter == 0:
            evictable += len(node.key)
        for slot in node.value.tolist():
            if slot in owner:
                raise InvariantError(f"slot {slot} is owned by both {_label(owner[slot])} and {_label(node)}")
            # the node: named only when a check fails (a label made for every slot took 2% of
            # the CPU of the tests a change to the 2024 engine's _split_node picks)
            owner[slot] = node
    check_lock_flows(root, lambda n: n.ref_counter)
    if evictable != cache.evictable_size():
        raise InvariantError(f"evictable size = tokens in unreferenced nodes: evictable_size() is "
                             f"{cache.evictable_size()} but unreferenced nodes hold {evictable} tokens")
    if pool is not None:
        check_pool(pool, owner, held)


def _slot_count(node: TreeNode) -> int:
    return 0 if node.value is None else int(node.value.numel())
