"""What radixviz adds around today's cache, outside SGLang's algorithm: pictures of the tree,
an observer for its micro-steps, the heap an eviction would build, and a policy switch.

``RadixCache`` (cache.py) inherits them, so cache.py keeps to SGLang's functions.
"""
from __future__ import annotations

from collections.abc import Callable

from radixviz.cache.evict_policy import eviction_key
from radixviz.cache.trace import EventKind as K, Tracer
from .cache_candidates import CandidateHeap
from .node import TreeNode
from .snapshot import ModernTreeSnapshot, snapshot_modern_node


class Watched:
    """Snapshots, the observer and the eviction-policy switch of a 2026 ``RadixCache``."""

    # set by the cache that inherits these methods (cache.py)
    root_node: TreeNode
    evictable_size_: int
    protected_size_: int
    _clock: int
    page_size: int
    enable_kv_events: bool
    tracer: Tracer
    evictable_leaves: CandidateHeap
    eviction_strategy: Callable
    eviction_policy: str

    def snapshot(self) -> ModernTreeSnapshot:
        """An immutable picture of the whole tree as it is now."""
        return ModernTreeSnapshot(snapshot_modern_node(self.root_node), self.evictable_size_,
                                  self._clock, protected_size=self.protected_size_,
                                  page_size=self.page_size, eviction_policy=self.eviction_policy,
                                  kv_events=self.enable_kv_events)

    @property
    def observer(self):
        return self.tracer.observer

    @observer.setter
    def observer(self, callback: Callable | None) -> None:
        """Attach a callable that receives every micro-step as an Event (None detaches)."""
        self.tracer.observer = callback

    def set_eviction_policy(self, policy: str) -> None:
        """Order the eviction candidates by ``policy`` from now on. SGLang fixes the policy at
        start-up; radixviz lets a lesson evict one tree several ways."""
        strategy = eviction_key(policy)
        candidates = list(self.evictable_leaves)
        self.eviction_strategy, self.eviction_policy = strategy, str(policy).lower()
        self.evictable_leaves = CandidateHeap(strategy)
        for node in candidates:
            self.evictable_leaves.add(node)

    def _emit_heap(self, num_tokens: int) -> None:
        """The candidates in pop order with the policy's key of each: the heap SGLang builds."""
        key_of = self.eviction_strategy
        ranked = sorted(self.evictable_leaves, key=key_of)
        self.tracer.emit("evict.heap", K.HEAP, tuple(ranked), policy=self.eviction_policy, target=num_tokens,
                         keys=tuple((n.id, key_of(n)) for n in ranked))
