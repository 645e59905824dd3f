"""The eviction walk SWA and Mamba share (v0.5.23 writes it in each of ``components/swa.py``
and ``components/mamba.py``, the same but for their host-tier backups, left out here).

A walk starts at the least recent node of the component's LRU list whose lock for the
component is 0. Each step takes that node: a leaf (unlocked in every component, no child with
Full KV) goes back to the cache to be deleted whole; an inside node loses this component's
data here, and the cascade takes the lower components' data on it too. The cursor moves to the
next unlocked node toward the recent end before the node is touched, and starts again from
the least recent end when a step took the node it pointed at.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...cache.trace import EventKind as K
from .cache_component import TreeComponent
from .cache_kinds import WingBranch

if TYPE_CHECKING:
    from .cache_kinds import WingTracer
    from .node import UnifiedTreeNode


class AuxiliaryComponent(TreeComponent):
    """A component evicted from its LRU list (SWA and Mamba); Full evicts by leaves."""

    _evict_device_cursor: UnifiedTreeNode | None

    def attach_tracer(self, tracer: WingTracer) -> None:
        super().attach_tracer(tracer)
        self.tr_walk = WingBranch(tracer, __name__)  # the steps written in this file

    def _evict_device_start(self, request_cnt: int) -> None:
        self._evict_device_request_cnt = request_cnt
        self._evict_device_cursor = self.tree_core.lru_lists[self.component_type].get_lru_no_lock()

    def _evict_device_next_node(self, tracker: dict, device_frees: dict, cache_actions: list) -> int | None:
        ct, core, tr = self.component_type, self.tree_core, self.tr_walk
        lru = core.lru_lists[ct]
        if self._evict_device_cursor is not None and not lru.in_list(self._evict_device_cursor):
            self._evict_device_cursor = lru.get_lru_no_lock()  # the last step took it: start over
        if (tracker[ct] >= self._evict_device_request_cnt or self._evict_device_cursor is None
                or not lru.in_list(self._evict_device_cursor)):
            return None
        x = self._evict_device_cursor  # step: evict.pick
        assert x.component_data[ct].value is not None
        self._evict_device_cursor = lru.get_prev_no_lock(x)
        leaf = x in core.evictable_device_leaves
        if tr.active: tr.emit("evict.pick", K.POP, (x,), component=str(ct), leaf=leaf)
        if leaf:
            return x.id  # the cache deletes the node, every component's data with it
        core._evict_component_and_detach_lru(x, self, device_frees, cache_actions, tracker)
        core._cascade_evict(x, self, tracker, device_frees, cache_actions)
        return None

    def _evict_device_end(self) -> None:
        self._evict_device_cursor = None
