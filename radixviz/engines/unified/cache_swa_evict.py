"""The SWA component's eviction and locks (v0.5.23's ``components/swa.py``, second half).

Eviction walks the SWA LRU list (cache_auxiliary.py): a leaf goes whole, an inside node
becomes an SWA tombstone, and its Mamba state goes with it (cascade: a state below a broken
window can never be matched). A lock covers the node and its ancestors until their edges
cover a window, tombstones included, and stamps the last one (the receipt keeps the stamp,
so the release stops at the same node even after splits moved it).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...cache.snapshot import invalidate
from ...cache.trace import EventKind as K
from .cache_auxiliary import AuxiliaryComponent
from .cache_kinds import UnifiedKind as UK, WingBranch
from .node import BASE_COMPONENT_TYPE

if TYPE_CHECKING:
    from .cache_kinds import WingTracer
    from .cache_params import DecLockRefParams, IncLockRefResult
    from .node import UnifiedTreeNode


class SWAComponentEviction(AuxiliaryComponent):
    """The hooks of the SWA component that evict and lock (its class is in cache_swa.py)."""

    sliding_window_size: int

    def attach_tracer(self, tracer: WingTracer) -> None:
        super().attach_tracer(tracer)
        self.tr_evict = WingBranch(tracer, __name__)  # the steps written in this file

    def evict_component(self, node: UnifiedTreeNode, device_frees: dict, cache_actions: list) -> int:
        ct = self.component_type
        cd = node.component_data[ct]
        if cd.value is None:
            return 0
        # the SWA free is given the Full slots: it follows their pairing to the SWA peers
        device_frees.setdefault(ct, []).append(node.component_data[BASE_COMPONENT_TYPE].value)
        freed = self.reclaimable_value_len(node)
        self.tree_core.component_evictable_size_[ct] -= freed
        cd.value = None  # step: evict.swa.tombstone
        invalidate(node)
        if self.tr_evict.active: self.tr_evict.emit("evict.swa.tombstone", UK.TOMBSTONE, (node,), component="swa", freed=freed)
        return freed

    def eviction_priority(self, is_leaf: bool) -> int:
        return 0 if is_leaf else 1

    # ---- locks: one window up from the node

    def acquire_component_lock(self, node: UnifiedTreeNode, result: IncLockRefResult) -> IncLockRefResult:
        ct, core, tr = self.component_type, self.tree_core, self.tr_evict
        root, cur = core.root_node, node
        covered, swa_uuid = 0, None
        while cur is not root and covered < self.sliding_window_size:
            cd = cur.component_data[ct]
            if cd.lock_ref == 0 and cd.value is not None:
                self._ledger_move(cur, locking=True)  # step: lock.swa.protect
            cd.lock_ref += 1  # step: lock.swa
            invalidate(cur)
            if tr.active: tr.emit("lock.swa", K.REF, (cur,), component="swa", old=cd.lock_ref - 1, new=cd.lock_ref, covered=covered + len(cur.key))
            covered += len(cur.key)
            if covered >= self.sliding_window_size:
                if cd.uuid is None:
                    cd.uuid = core.next_component_uuid()  # step: lock.swa.stamp
                    invalidate(cur)
                swa_uuid = cd.uuid
                if tr.active: tr.emit("lock.swa.stamp", UK.WINDOW, (cur,), component="swa", uuid=swa_uuid, covered=covered)
            cur = cur.parent
        result.set_lock_uuid(ct, swa_uuid)
        return result

    def release_component_lock(self, node: UnifiedTreeNode, params: DecLockRefParams) -> None:
        ct, core, tr = self.component_type, self.tree_core, self.tr_evict
        root = core.root_node
        if node is root:
            return
        boundary = params.get_lock_uuid(ct)
        cur = node
        while cur is not root:
            cd = cur.component_data[ct]
            assert cd.lock_ref > 0, f"SWA release found no lock on node #{cur.id}"
            if cd.lock_ref == 1 and cd.value is not None:
                self._ledger_move(cur, locking=False)  # step: unlock.swa.evictable
            cd.lock_ref -= 1  # step: unlock.swa
            invalidate(cur)
            if cd.lock_ref == 0:
                core._update_evictable_leaf_sets(cur)
            if tr.active: tr.emit("unlock.swa", K.REF, (cur,), component="swa", old=cd.lock_ref + 1, new=cd.lock_ref)
            if boundary and cd.uuid == boundary:
                break
            cur = cur.parent

    def release_window_lock(self, node: UnifiedTreeNode, boundary: int | None, device_frees: dict,
                            cache_actions: list) -> None:
        """Give up the window lock early (the request decoded past it): what becomes unlocked
        turns evictable, and an unlocked device leaf loses its SWA KV at once."""
        ct, core, tr = self.component_type, self.tree_core, self.tr_evict
        root, cur = core.root_node, node
        while cur is not root:
            cd = cur.component_data[ct]
            assert cd.lock_ref > 0, f"SWA window release found no lock on node #{cur.id}"
            cd.lock_ref -= 1  # step: unlock.swa.window
            invalidate(cur)
            if tr.active: tr.emit("unlock.swa.window", K.REF, (cur,), component="swa", old=cd.lock_ref + 1, new=cd.lock_ref)
            if cd.lock_ref == 0:
                core._update_evictable_leaf_sets(cur)
            if cd.lock_ref == 0 and cd.value is not None:
                self._ledger_move(cur, locking=False)
                if core._is_device_leaf(cur):
                    core._evict_component_and_detach_lru(cur, self, device_frees, cache_actions)
            if boundary and cd.uuid == boundary:
                break
            cur = cur.parent
