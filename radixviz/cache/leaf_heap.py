"""The tree's leaves, least recently used first, kept from one evict() call to the next.

The release gathers every leaf into a fresh heap on each eviction, which costs a walk of
the whole tree per call. Untraced evictions pop from this lasting heap instead and get the
same leaves in the same order: access times are distinct ticks, so "the oldest leaf" is
the same whichever heap it comes from. (Traced evictions still run the release's code, so
a learner watches the real thing.)

Entries are never updated in place. A leaf whose time changes, and a node that becomes a
leaf, are pushed again; only the newest entry per node counts, and a popped entry is
dropped if its node has since gained a child or left the tree.
"""
from __future__ import annotations

import heapq


def _attached(node) -> bool:
    parent = node.parent
    return parent is None or parent.children.get(node.key[0]) is node


class LeafHeap:
    def __init__(self):
        self._heap: list = []     # (last_access_time, id, node)
        self._stamp: dict = {}    # node id -> time of its newest entry still in the heap
        self._limit = 1024        # compact when the heap grows past this

    def note(self, node) -> None:
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
            if self._live(t, node):
                return node
        return None

    def _live(self, t, node) -> bool:
        return node.last_access_time == t and not node.children and _attached(node)

    def _compact(self) -> None:
        """Drop every entry that can no longer be popped (stale times, inner or gone nodes)."""
        stamp = self._stamp
        kept = [e for e in self._heap if stamp.get(e[1]) == e[0] and self._live(e[0], e[2])]
        heapq.heapify(kept)
        self._heap = kept
        self._stamp = {e[1]: e[0] for e in kept}
        self._limit = max(1024, 2 * len(kept))


class UntracedEviction:
    """evict() with nobody watching, for a cache that keeps its leaves in ``self._leaves``
    (a LeafHeap) and deletes one with ``self._delete_leaf``."""

    def _evict_untraced(self, num_tokens, evict_callback) -> None:
        """The same leaves in the same order as the release's evict(), taken from the lasting
        leaf heap instead of a heap of every leaf built afresh."""
        num_evicted, set_aside = 0, []
        try:
            while num_evicted < num_tokens:
                x = self._leaves.pop()
                if x is None:
                    break
                set_aside.append(x)  # still a leaf unless deleted below: it goes back
                if x is self.root_node:
                    break
                if x.ref_counter > 0:
                    continue
                num_evicted += evict_callback(x.value)
                self._delete_leaf(x)
                set_aside.pop()
        finally:
            for x in set_aside:
                self._leaves.note(x)
