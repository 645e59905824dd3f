"""The eviction candidates of the 2026 engine, kept ordered from one evict() to the next.

SGLang keeps a set of evictable leaves and heaps all of them, keyed by the policy, on
every eviction. Popping from one lasting heap gives the same nodes in the same order:

- a node's policy key only ever moves one way (times rise, hit counts rise, priority is a
  running maximum, creation time is fixed), so a key seen once is never seen again for
  that node, and the newest entry pushed for a node is the only one that counts;
- no two candidates share a key (see evict_policy.py), so "the smallest" is one node.

Entries are never changed in place: a candidate whose key moved is pushed again, and a
popped entry is dropped if it is not its node's newest or the node is no longer a candidate.
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING
from collections.abc import Callable

if TYPE_CHECKING:
    from .node import TreeNode


class CandidateHeap:
    def __init__(self, key_of: Callable) -> None:
        self.key_of = key_of
        self.members: dict = {}   # the candidates now (an ordered set): unlocked, childless
        self._heap: list = []     # (policy key, node id, node), possibly stale
        self._newest: dict = {}   # node -> the key of its newest entry in the heap

    def __iter__(self):
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, node: TreeNode) -> bool:
        return node in self.members

    def add(self, node: TreeNode) -> None:
        """``node`` is a candidate, perhaps with a key that moved since it was last pushed."""
        self.members[node] = None
        key = self.key_of(node)
        if self._newest.get(node) != key:
            self._newest[node] = key
            heapq.heappush(self._heap, (key, node.id, node))
            if len(self._heap) > 2 * len(self.members) + 256:
                self._compact()

    def refresh(self, node: TreeNode) -> None:
        """``node``'s policy key may have moved (a touch, a hit): re-rank it if it is a candidate."""
        if node in self.members:
            self.add(node)

    def remove(self, node: TreeNode, gone: bool = False) -> None:
        """``node`` stopped being a candidate (locked, given a child, or ``gone`` from the tree)."""
        self.members.pop(node, None)
        if gone:
            self._newest.pop(node, None)

    def pop(self):
        """The candidate with the smallest key, taken out of the set; None when there is none."""
        heap, newest, members = self._heap, self._newest, self.members
        while heap:
            key, _, node = heapq.heappop(heap)
            if newest.get(node) != key:
                continue  # a newer entry for this node exists, or the node left the tree
            del newest[node]
            if node in members:
                del members[node]
                return node
        return None

    def _compact(self) -> None:
        key_of = self.key_of
        self._heap = [(key_of(n), n.id, n) for n in self.members]
        heapq.heapify(self._heap)
        self._newest = {entry[2]: entry[0] for entry in self._heap}
