"""The tree node: an edge of tokens and the KV slots that hold them."""
from __future__ import annotations

import torch

from radixviz.cache.text import tokens_text


class TreeNode:
    """One node of the radix tree.

    ``key`` is the stretch of tokens on the edge from the parent and ``value`` their slot
    indices in the KV pool (a 1-D int64 tensor of the same length). ``children`` maps the
    first token of each child's edge to the child: sibling edges never share a first token,
    so this finds the one child that can share a prefix with a query.
    """

    __slots__ = ("id", "key", "value", "children", "parent", "ref_counter",
                 "last_access_time", "_snap")

    def __init__(self, id: int = -1, last_access_time: int = 0) -> None:
        self.id = id
        self.key: tuple = ()
        # None only until the engine gives the new node its slots (the root: an empty tensor)
        self.value: torch.Tensor = None  # type: ignore[assignment]
        self.children: dict = {}
        # None at the root only: every walk up the tree stops at the root
        self.parent: TreeNode = None  # type: ignore[assignment]
        self.ref_counter = 0
        self.last_access_time = last_access_time
        self._snap: object | None = None  # cached immutable snapshot, dropped whenever this subtree changes

    def __lt__(self, other: TreeNode) -> bool:
        # heapq orders leaves by this: least recently used first
        return self.last_access_time < other.last_access_time

    def is_leaf(self) -> bool:
        return not self.children

    def __repr__(self) -> str:
        text = tokens_text(self.key[:20])
        return f"TreeNode(#{self.id} {text!r} ref={self.ref_counter} t={self.last_access_time})"
