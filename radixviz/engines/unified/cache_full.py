"""``FullComponent``: full-attention KV, the tree's backbone (v0.5.23's ``components/full.py``).

A node lives while it holds Full KV; Full is evicted only from leaves, whole nodes at a time,
in the order of the eviction policy (a heap of the unlocked leaves, as the 2026 tree had).
Its lock runs from the node to the root: every token before the last one is read again.
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from ...cache.snapshot import invalidate
from ...cache.trace import EventKind as K
from .cache_component import DataValidator, TreeComponent, Validator
from .node import ComponentType

if TYPE_CHECKING:
    from .cache_params import DecLockRefParams, IncLockRefResult
    from .node import UnifiedTreeNode


class FullComponent(TreeComponent):
    component_type = ComponentType.FULL

    def create_match_validator(self) -> Validator:
        return DataValidator(self.component_type, "its Full KV is gone")

    def redistribute_on_node_split(self, new_parent: UnifiedTreeNode, child: UnifiedTreeNode) -> None:
        ct = self.component_type
        child_cd, parent_cd = child.component_data[ct], new_parent.component_data[ct]
        parent_cd.lock_ref = child_cd.lock_ref  # a lock through the child runs through its prefix
        split_len = len(new_parent.key)
        if child_cd.value is not None:
            parent_cd.value = child_cd.value[:split_len].clone()
            child_cd.value = child_cd.value[split_len:].clone()

    def evict_component(self, node: UnifiedTreeNode, device_frees: dict, cache_actions: list) -> int:
        ct = self.component_type
        cd = node.component_data[ct]
        if cd.value is None:
            return 0
        device_frees.setdefault(ct, []).append(cd.value)
        freed = self.reclaimable_value_len(node)
        self.tree_core.component_evictable_size_[ct] -= freed
        # the value stays until the cascade is over: the SWA free reads these slots
        return freed

    def eviction_priority(self, is_leaf: bool) -> int:
        return 0 if is_leaf else 2

    # ---- eviction: the unlocked leaves, by the policy's key

    def _evict_device_start(self, request_cnt: int) -> None:
        key_of = self.tree_core.eviction_strategy
        self._evict_device_request_cnt = request_cnt
        self._evict_device_last_node: UnifiedTreeNode | None = None
        self._evict_device_heap = [(key_of(n), n) for n in self.tree_core.evictable_device_leaves]
        heapq.heapify(self._evict_device_heap)

    def _evict_device_next_node(self, tracker: dict, device_frees: dict, cache_actions: list) -> int | None:
        ct, core, tr = self.component_type, self.tree_core, self.tr
        last = self._evict_device_last_node
        if last is not None and last.parent is not None and last.parent in core.evictable_device_leaves:
            heapq.heappush(self._evict_device_heap, (core.eviction_strategy(last.parent), last.parent))  # step: evict.full.push_parent
            if tr.active: tr.emit("evict.full.push_parent", K.PUSH_PARENT, (last.parent,), component="full", key=core.eviction_strategy(last.parent))
        self._evict_device_last_node = None
        while tracker[ct] < self._evict_device_request_cnt and self._evict_device_heap:
            key, x = heapq.heappop(self._evict_device_heap)  # step: evict.full.pop
            if x not in core.evictable_device_leaves:
                continue
            if tr.active: tr.emit("evict.full.pop", K.POP, (x,), component="full", key=key, policy=core.eviction_policy)
            self._evict_device_last_node = x
            return x.id
        return None

    def _evict_device_end(self) -> None:
        self._evict_device_heap = []
        self._evict_device_last_node = None

    # ---- locks: the node and every ancestor

    def acquire_component_lock(self, node: UnifiedTreeNode, result: IncLockRefResult) -> IncLockRefResult:
        ct, core, tr = self.component_type, self.tree_core, self.tr
        root, cur, delta = core.root_node, node, 0
        while cur is not root:
            cd = cur.component_data[ct]
            assert cd.value is not None, f"Full KV missing above a locked node: #{cur.id}"
            if cd.lock_ref == 0:
                delta += self._ledger_move(cur, locking=True)  # step: lock.full.protect
            cd.lock_ref += 1  # step: lock.full
            invalidate(cur)
            core.evictable_device_leaves.discard(cur)
            if tr.active: tr.emit("lock.full", K.REF, (cur,), component="full", old=cd.lock_ref - 1, new=cd.lock_ref)
            cur = cur.parent
        result.delta = delta
        return result

    def release_component_lock(self, node: UnifiedTreeNode, params: DecLockRefParams) -> None:
        ct, core, tr = self.component_type, self.tree_core, self.tr
        root, cur = core.root_node, node
        while cur is not root:
            cd = cur.component_data[ct]
            assert cd.lock_ref > 0, f"Full release found no lock on node #{cur.id}"
            if cd.lock_ref == 1 and cd.value is not None:
                self._ledger_move(cur, locking=False)  # step: unlock.full.evictable
            cd.lock_ref -= 1  # step: unlock.full
            invalidate(cur)
            if cd.lock_ref == 0:
                core._update_evictable_leaf_sets(cur)
            if tr.active: tr.emit("unlock.full", K.REF, (cur,), component="full", old=cd.lock_ref + 1, new=cd.lock_ref)
            cur = cur.parent
