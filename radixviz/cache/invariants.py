"""What every engine's invariant check shares: the error it raises and the pool's accounting.

Each engine checks its own tree (``v2024/invariants.py``, ``v2026/invariants.py``); both end
by holding the pool to the tree here: every slot's reference count must equal the node that
owns it plus the running requests that hold it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections import Counter

import torch

from .text import tokens_text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any
    from .pool import TokenToKVPool


class InvariantError(AssertionError):
    """An invariant of the cache or pool is broken; the message names the node or slot."""


def node_label(node: Any) -> str:
    """``node #3 'Hello_'``: how a check names the node it found broken."""
    return f"node #{node.id} {tokens_text(node.key[:16])!r}"


def check_lock_flows(root: Any, lock_of: Callable[[Any], int]) -> None:
    """Every lock is a path from the node a request locked up to the root, so a node (the
    root aside: its own lock is permanent) holds at least the locks of its children together;
    what is left are the locks that end there. ``lock_of(node)`` reads a node's count."""
    stack = list(root.children.values())
    while stack:
        node = stack.pop()
        below = sum(lock_of(child) for child in node.children.values())
        if lock_of(node) < below:
            raise InvariantError(f"{node_label(node)}: {lock_of(node)} lock(s) but its children hold "
                                 f"{below} together: a lock was released below where it was taken")
        stack.extend(node.children.values())


def check_pool(pool: TokenToKVPool, owner: dict, held: Iterable[torch.Tensor | Sequence[int]]) -> None:
    """Raise InvariantError unless each slot's pool count is its owner (``owner``: slot ->
    node) plus the requests in ``held`` (slot tensors or lists) that use it."""
    uses = Counter(owner.keys())
    for slots in held:
        values = slots.tolist() if isinstance(slots, torch.Tensor) else list(slots)
        uses.update(values)
    refcounts = pool.refcounts()
    for slot, count in enumerate(refcounts):
        if count != uses.get(slot, 0):
            who = node_label(owner[slot]) if slot in owner else "no node"
            raise InvariantError(f"slot {slot}: pool counts {count} references but {who} and "
                                 f"{uses.get(slot, 0) - (slot in owner)} request(s) hold it")
    outside = [s for s in uses if not 0 <= s < len(refcounts)]
    if outside:
        raise InvariantError(f"slot {outside[0]} is outside the pool (size {len(refcounts)})")
    kept = getattr(pool, "check_free_list", None)   # the device pool keeps its free slots as they change
    if kept is not None:
        try:
            kept()
        except ValueError as error:
            raise InvariantError(str(error)) from None
