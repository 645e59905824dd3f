"""The one eviction order: the tree's leaves in a heap, least recently used first.

The release gathered every leaf into a fresh heap at each evict() call, popped the oldest,
and pushed a parent as soon as its last child was deleted. This heap holds exactly those
leaves, but it lasts from one call to the next, so a call does not walk the whole tree:
the engine tells it when a node becomes a leaf or a leaf's access time changes. Access
times are distinct ticks of a logical clock, so the leaf it pops is the one the release's
heap would pop. Traced or not, evict() takes its leaves from here; the trace's HEAP step
shows the leaves the heap holds when the call starts.

Entries are never updated in place. A leaf whose time changes, and a node that becomes a
leaf, are pushed again; only the newest entry per node counts, and a popped entry is
dropped if its node has since gained a child or left the tree.
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from radixviz.cache.keys import get_child_key

if TYPE_CHECKING:
    from .node import TreeNode


def _attached(node: TreeNode) -> bool:
    parent = node.parent
    return parent is None or parent.children.get(get_child_key(node.key)) is node


class LeafHeap:
    def __init__(self) -> None:
        self._heap: list = []     # (last_access_time, id, node)
        self._stamp: dict = {}    # node id -> time of its newest entry still in the heap
        self._limit = 1024        # compact when the heap grows past this

    def note(self, node: TreeNode) -> None:
        """``node`` is a leaf (new, just touched, or just bereft of its last child)."""
        t = node.last_access_time
        if self._stamp.get(node.id) == t:
            return
        self._stamp[node.id] = t
        heapq.heappush(self._heap, (t, node.id, node))
        if len(self._heap) > self._limit:
            self._compact()

    def pop(self):
        """The least recently used leaf, taken out of the heap; None when there is none."""
        heap, stamp = self._heap, self._stamp
        while heap:
            t, node_id, node = heapq.heappop(heap)
            if stamp.get(node_id) != t:
                continue  # a newer entry for this node exists, or this one was already taken
            del stamp[node_id]
            # _live, written out: every eviction pops here
            if node.last_access_time == t and not node.children and _attached(node):
                return node
        return None

    def leaves(self) -> list:
        """The leaves the heap holds, least recently used first (what pop() would give)."""
        stamp = self._stamp
        return [e[2] for e in sorted(self._heap) if stamp.get(e[1]) == e[0] and self._live(e[0], e[2])]

    def _live(self, t: int, node: TreeNode) -> bool:
        return node.last_access_time == t and not node.children and _attached(node)

    def _compact(self) -> None:
        """Drop every entry that can no longer be popped (stale times, inner or gone nodes)."""
        stamp = self._stamp
        kept = [e for e in self._heap if stamp.get(e[1]) == e[0] and self._live(e[0], e[2])]
        heapq.heapify(kept)
        self._heap = kept
        self._stamp = {e[1]: e[0] for e in kept}
        self._limit = max(1024, 2 * len(kept))
