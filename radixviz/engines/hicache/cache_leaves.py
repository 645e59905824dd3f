"""Small parts of the hierarchical cache: its candidate sets and its transfer counters."""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import asdict, dataclass

if TYPE_CHECKING:
    from .node import TreeNode


class LeafSet:
    """The candidates of one tier's eviction: SGLang's ``evictable_leaves`` and
    ``evictable_host_leaves``, plain sets that ``evict``/``evict_host`` heap afresh each
    time. Kept in insertion order, so iterating is deterministic (eviction never depends on
    it: no two candidates share a policy key, see evict_policy.py)."""

    def __init__(self) -> None:
        self.members: dict = {}

    def __iter__(self):
        return iter(list(self.members))

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, node: TreeNode) -> bool:
        return node in self.members

    def add(self, node: TreeNode) -> None:
        self.members[node] = None

    def remove(self, node: TreeNode, gone: bool = False) -> None:
        """Drop ``node`` if it is a member (``gone``: it left the tree; the same here)."""
        self.members.pop(node, None)

    def refresh(self, node: TreeNode) -> None:
        """A candidate's key moved: nothing to do, the heap is built when eviction runs."""

    def clear(self) -> None:
        self.members.clear()


@dataclass
class Moved:
    """Tokens moved and dropped since the last reset (SGLang counts some as metrics)."""
    written: int = 0        # device -> host copies issued (write-through or write-back)
    loaded: int = 0         # host -> device copies issued (load back)
    demoted: int = 0        # device slots freed from nodes whose host copy stays
    dropped: int = 0        # device slots freed from nodes deleted outright (no host copy)
    host_evicted: int = 0   # host slots freed from host-only nodes deleted

    def as_dict(self) -> dict:
        return asdict(self)
