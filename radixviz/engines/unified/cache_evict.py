"""The unified tree's eviction (v0.5.23's ``evict_device_*``, ``_cascade_evict`` and the leaf
deletion in ``unified_tree_core.py``).

The cache drives one component at a time: each step asks the component for its next victim.
Full names an unlocked leaf; SWA and Mamba name the least recent unlocked node in their list,
and either tombstone it themselves (an inside node: the node stays) or name it as a leaf.
A named leaf is deleted whole, every component's data with it. A tombstone cascades to the
components of equal or lower priority on the node (inside: Full 2, SWA 1, Mamba 0), so
losing SWA KV takes the Mamba state with it, while losing a Mamba state takes nothing else.
Each step's freed slots go back to the cache at once (``EvictStep``); none is freed here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...cache.snapshot import invalidate
from ...cache.trace import EventKind as K
from .cache_component import TreeView
from .cache_kinds import UnifiedKind as UK
from .node import BASE_COMPONENT_TYPE, ComponentType

if TYPE_CHECKING:
    from .cache_component import TreeComponent
    from .cache_events import KVCacheEventRecorder
    from .cache_kinds import WingBranch
    from .cache_params import DecLockRefParams
    from .node import UnifiedTreeNode


class EvictStep:
    """One step's outcome: a leaf for the cache to delete (or None), what each component
    freed in the step, the slots to free, further actions, and whether anything moved."""

    __slots__ = ("node_id", "tracker", "device_frees", "cache_actions", "made_progress")

    def __init__(self) -> None:
        self.node_id: int | None = None
        self.tracker: dict = {}
        self.device_frees: dict = {}
        self.cache_actions: list = []
        self.made_progress = False


class TreeEvict(TreeView):
    """The eviction half of UnifiedTreeCore (cache_tree.py)."""

    tr_evict: WingBranch  # the steps written in this file
    event_recorder: KVCacheEventRecorder

    def evict_device_start(self, component_type: ComponentType, request_cnt: int) -> None:
        self.components_by_type[component_type].evict_device_start(request_cnt)

    def evict_device_next_node(self, component_type: ComponentType, tracker: dict) -> EvictStep:
        """One step of a component's walk; the step's counts are deltas on ``tracker``."""
        result = EvictStep()
        updated = dict(tracker)
        result.node_id = self.components_by_type[component_type].evict_device_next_node(
            updated, result.device_frees, result.cache_actions)
        for ct, n in updated.items():
            if n != tracker.get(ct, 0):
                result.tracker[ct] = n - tracker.get(ct, 0)
        result.made_progress = (result.node_id is not None or bool(result.tracker) or bool(result.cache_actions)
                                or any(result.device_frees.values()))
        return result

    def evict_device_end(self, component_type: ComponentType) -> None:
        self.components_by_type[component_type].evict_device_end()

    def evict_device_leaf(self, node_id: int) -> EvictStep:
        """Delete an unlocked leaf and every component's data on it."""
        result = EvictStep()
        node = self.node_by_id(node_id)
        assert self._is_device_leaf(node), f"node #{node.id} is not an evictable leaf"
        tracker = dict.fromkeys(self.component_types, 0)
        self._delete_unbacked_device_leaf(node, tracker, result.device_frees, result.cache_actions)
        result.tracker = {ct: n for ct, n in tracker.items() if n}
        result.made_progress = True
        return result

    def _delete_unbacked_device_leaf(self, node: UnifiedTreeNode, tracker: dict,
                                     device_frees: dict, cache_actions: list) -> None:
        self._release_all_component_layers(node, tracker, device_frees, cache_actions)
        parent = node.parent
        self._remove_leaf_from_parent(node)
        self._update_evictable_leaf_sets(parent)
        self._iteratively_delete_tombstone_ancestors(parent, tracker, device_frees, cache_actions)

    def _release_all_component_layers(self, node: UnifiedTreeNode, tracker: dict,
                                      device_frees: dict, cache_actions: list) -> None:
        self.event_recorder.record_remove(node)
        for component in self.components:
            self._evict_component_and_detach_lru(node, component, device_frees, cache_actions, tracker)
        self.evictable_device_leaves.discard(node)

    def _cascade_evict(self, node: UnifiedTreeNode, trigger: TreeComponent, tracker: dict,
                       device_frees: dict, cache_actions: list) -> None:
        """After ``trigger`` evicted its data on ``node``: evict every component of equal or
        lower priority there too."""
        is_leaf = node in self.evictable_device_leaves
        base_evicted = False
        for component in self.components:
            if self._should_cascade_evict_component(node, trigger, component, is_leaf):
                self._evict_component_and_detach_lru(node, component, device_frees, cache_actions, tracker)  # step: evict.cascade
                if self.tr_evict.active: self.tr_evict.emit("evict.cascade", UK.CASCADE, (node,), trigger=str(trigger.component_type), component=str(component.component_type))
                if component.component_type == BASE_COMPONENT_TYPE:
                    base_evicted = True
        # Full's value is cleared last: the SWA free above still read it
        if trigger.component_type == BASE_COMPONENT_TYPE or base_evicted:
            node.component_data[BASE_COMPONENT_TYPE].value = None
            invalidate(node)
        self._update_evictable_leaf_sets(node)

    @staticmethod
    def _should_cascade_evict_component(node: UnifiedTreeNode, trigger: TreeComponent,
                                        component: TreeComponent, is_leaf: bool) -> bool:
        if component.eviction_priority(is_leaf) > trigger.eviction_priority(is_leaf):
            return False
        if component is trigger or not component.node_has_component_data(node):
            return False
        cd = node.component_data[component.component_type]
        # on a leaf every priority is 0: a component that outranks the trigger inside the tree
        # is a candidate only through that, and its lock is a real pin to be spared
        if component.eviction_priority(is_leaf=False) >= trigger.eviction_priority(is_leaf=False):
            if cd.lock_ref != 0:
                return False
        assert cd.lock_ref == 0, f"a cascade met a locked {component.component_type} on node #{node.id}"
        return True

    def _remove_leaf_from_parent(self, node: UnifiedTreeNode) -> None:
        removed = node.parent.children.pop(self.child_key(node.key), None)  # step: evict.delete
        assert removed is node
        invalidate(node.parent)
        self._node_arena.pop(node.id, None)
        if self.tr_evict.active: self.tr_evict.emit("evict.delete", K.DELETE, (node.parent,), leaf=node.id, key=node.key)

    def _evict_component_and_detach_lru(self, node: UnifiedTreeNode, component: TreeComponent,
                                        device_frees: dict, cache_actions: list, tracker: dict | None = None) -> int:
        freed = component.evict_component(node, device_frees, cache_actions)  # step: evict.free
        ct = component.component_type
        if tracker is not None:
            tracker[ct] = tracker.get(ct, 0) + freed
        lru = self.lru_lists[ct]
        if lru.in_list(node):
            lru.remove_node(node)
        if freed and self.tr_evict.active: self.tr_evict.emit("evict.free", K.FREE, (node,), component=str(ct), freed=freed)
        return freed

    def _iteratively_delete_tombstone_ancestors(self, cur: UnifiedTreeNode, tracker: dict,
                                                device_frees: dict, cache_actions: list) -> None:
        """Walk up from a deleted leaf's parent and delete childless nodes left without Full KV
        (only a host tier leaves such nodes; here the walk stops at the first node)."""
        while cur is not self.root_node and len(cur.children) == 0:
            if any(cd.lock_ref > 0 for cd in cur.component_data):
                break
            if cur.component_data[BASE_COMPONENT_TYPE].value is not None:
                self._update_evictable_leaf_sets(cur)
                break
            for component in self.components:
                if component.node_has_component_data(cur):
                    self._evict_component_and_detach_lru(cur, component, device_frees, cache_actions, tracker)
            self._remove_leaf_from_parent(cur)
            parent = cur.parent
            self._update_evictable_leaf_sets(parent)
            cur = parent

    def evict_excess_path_states(self, tail_node_id: int, device_frees: dict,
                                 cache_actions: list) -> None:
        mamba = self.components_by_type[ComponentType.MAMBA]
        mamba._evict_excess_path_states(self.node_by_id(tail_node_id), device_frees, cache_actions)  # type: ignore[attr-defined]

    def dec_swa_lock_only(self, node_id: int, params: DecLockRefParams) -> EvictStep:
        """Release the SWA part of a lock early, and the locks of lower priority on the node
        (Mamba) the receipt took; the Full lock stays. SWA KV a release frees on an unlocked
        leaf comes back in the step for the cache to free."""
        result = EvictStep()
        node = self.node_by_id(node_id)
        assert params.node_id == node.id, f"a receipt of node #{params.node_id} released on #{node.id}"
        swa = self.components_by_type.get(ComponentType.SWA)
        if node is self.root_node or swa is None:
            return result
        swa.release_window_lock(node, params.get_lock_uuid(ComponentType.SWA),  # type: ignore[attr-defined]
                                result.device_frees, result.cache_actions)
        swa_priority = swa.eviction_priority(is_leaf=False)
        for component in reversed(self.components):
            if component.component_type in params.skipped_lock_components:
                continue
            if component.eviction_priority(is_leaf=False) < swa_priority:
                component.release_component_lock(node, params)
        return result
