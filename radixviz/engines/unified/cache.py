"""SGLang v0.5.23's unified radix cache (``mem_cache/unified_radix_cache.py``), device tier only.

The tree (cache_tree.py) decides; this cache executes. It owns the pools (cache_pools.py) and
the components, runs the tree's insert step by step applying the actions between steps,
drives eviction one component at a time, copies a matched Mamba state into the request's
slot, and hands out lock receipts. One cache serves any mix the registry of v0.5.23 builds:
Full alone, Full + SWA (sliding-window models), Full + Mamba (state-space and linear
attention), Full + SWA + Mamba.

Read beside SGLang's file: ``match_prefix``/``_match_tree``/``_finalize_match_result``,
``insert``, ``evict``/``evict_for_alloc``/``_evict``/``_evict_components``, the lock
calls, ``_apply_cache_action``. Differences, each stated: calls are checked first and a bad
one changes nothing (SGLang asserts, part way through); a matched Mamba state is copied at
once (SGLang notes the source and copies before the batch runs); an insert needs its slots
(SGLang lets the token ids stand in). Left out with the host tier: HiCache and storage,
prefetch, write-back, the external linker, sessions, retraction backups, TP/PP consensus and
metrics. KV events: cache_events.py. ``cache_checks.py`` holds the argument checks and the pictures.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...cache.trace import EventKind as K
from .cache_actions import (FreeComponentDeviceSlot, FreeDeviceKV, FreeDeviceKVFullOnly,
                            MambaEvictExcessPathStates, RecoverSWAWithLockedFull, SWARebuild)
from .cache_checks import CacheChecks
from .cache_evict import EvictStep
from .cache_kinds import UnifiedKind as UK
from .cache_params import (DecLockRefParams, EvictParams, EvictResult, IncLockRefResult, InsertParams,
                           InsertResult, MatchPrefixParams, MatchResult, TreeLock)
from .node import BASE_COMPONENT_TYPE, ComponentType

if TYPE_CHECKING:
    from collections.abc import Callable


class UnifiedRadixCache(CacheChecks):
    # ---- match

    def match_prefix(self, params: MatchPrefixParams | object) -> MatchResult:
        """The longest cached prefix every component can reuse. ``params``: a
        MatchPrefixParams, or just a key. May split a node (the walk's end is cut off)."""
        if not isinstance(params, MatchPrefixParams):
            params = MatchPrefixParams(self._key(params))
        else:
            params.key = self._key(params.key)
        tr = self.tracer
        tr.op = "match_prefix"
        result, _ = self.tree_core.match_prefix(params.key)
        for component in self.tree_core.components:
            result = component.finalize_match_result_in_cache(params, result)
        if tr.active: tr.emit("match.result", K.RESULT, (self.tree_core.node_by_id(result.best_match_node),), matched=result.device_prefix_len, full_hit=result.full_kv_hit_length, refused=tuple(str(ct) for ct in result.stop.refused) if result.stop else (), reasons=tuple((str(ct), why) for ct, why in result.stop.reasons) if result.stop else ())
        return result  # step: match.result

    # ---- insert

    def insert(self, params: InsertParams) -> InsertResult:
        """Insert a request's tokens with its slots; returns how many leading tokens the tree
        held already. Frees the request's copies of slots the tree holds (past its
        ``prev_prefix_len``); a Mamba state not taken (``mamba_exist``) stays the caller's."""
        self._check_insert(params)
        tree, tr = self.tree_core, self.tracer
        tr.op = "insert"
        try:
            step = tree.begin_insert(params)
            while True:
                self._apply_cache_actions(step.actions)
                if step.result is not None:
                    if tr.active: tr.emit("insert.result", K.RESULT, (), last_node=step.result.last_device_node, prefix_len=step.result.prefix_len, mamba_exist=step.result.mamba_exist)
                    return step.result  # step: insert.result
                step = tree.resume_insert()
        finally:
            self._apply_cache_actions(tree.end_insert())

    # ---- eviction

    def evict(self, params: EvictParams) -> EvictResult:
        """Free at least what ``params`` asks of each component (if that much is evictable)."""
        self._check_evict(params)
        self.tracer.op = "evict"
        return self._evict(params)

    def evict_for_alloc(self, params: EvictParams) -> EvictResult:
        """Evict until each component named in ``params`` has that much more room in its pool
        (a cascade may free a component's room before its own walk starts)."""
        self._check_evict(params)
        self.tracer.op = "evict"
        targets = {ct: (ct, self._component_available_size(ct) + n)
                   for ct, n in self._evict_request_by_type(params).items() if n > 0 and ct in self.tree_components}
        return self._evict(params, targets)

    @staticmethod
    def _evict_request_by_type(params: EvictParams) -> dict:
        return {ComponentType.FULL: params.num_tokens, ComponentType.SWA: params.swa_num_tokens,
                ComponentType.MAMBA: params.mamba_num}

    def _component_available_size(self, component_type: ComponentType) -> int:
        if component_type == ComponentType.FULL:
            return self.token_to_kv_pool_allocator.full_available_size()
        if component_type == ComponentType.SWA:
            return self.token_to_kv_pool_allocator.swa_available_size()  # type: ignore[union-attr]
        return self.mamba_pool.available_size()  # type: ignore[union-attr]

    def _evict(self, params: EvictParams, available_size_targets: dict | None = None) -> EvictResult:
        tracker = dict.fromkeys(self.tree_components, 0)
        self._evict_components(self._evict_request_by_type(params), tracker, available_size_targets)
        if self.tracer.active: self.tracer.emit("evict.result", K.RESULT, (), evicted=tuple((str(ct), n) for ct, n in tracker.items()))
        return EvictResult(num_tokens_evicted=tracker[BASE_COMPONENT_TYPE],  # step: evict.result
                           swa_num_tokens_evicted=tracker.get(ComponentType.SWA, 0),
                           mamba_num_evicted=tracker.get(ComponentType.MAMBA, 0))

    def _evict_components(self, request_by_type: dict, tracker: dict, available_size_targets: dict | None) -> None:
        tree = self.tree_core

        def target_reached(component_type: ComponentType) -> bool:
            if available_size_targets is None or component_type not in available_size_targets:
                return False
            target_component, target_size = available_size_targets[component_type]
            return self._component_available_size(target_component) >= target_size

        for ct in self.tree_components:
            request_cnt = request_by_type[ct]
            # an allocation's Full shortfall walks to its target, not to the count asked
            to_target = (ct == ComponentType.FULL and request_cnt > 0
                         and available_size_targets is not None and ct in available_size_targets)
            # an earlier component's cascade may have freed this one's share already
            if target_reached(ct) or (not to_target and tracker[ct] >= request_cnt):
                continue
            walk_quota = max(request_cnt, tracker[ct] + tree.evictable_size()) if to_target else request_cnt
            tree.evict_device_start(ct, walk_quota)  # step: evict.start
            if self.tracer.active: self.tracer.emit("evict.start", K.HEAP, (), component=str(ct), target=walk_quota, done=tracker[ct])
            try:
                while True:
                    node_id, made_progress = self._evict_device_next_node(ct, tracker)
                    if node_id is None:
                        if not made_progress:
                            break
                    else:
                        self._evict_device_leaf(node_id, tracker)
                    if target_reached(ct):
                        break
            finally:
                tree.evict_device_end(ct)

    def _evict_device_next_node(self, component_type: ComponentType, tracker: dict) -> tuple:
        step = self.tree_core.evict_device_next_node(component_type, tracker)
        self._apply_eviction_result(step)
        for ct, n in step.tracker.items():
            tracker[ct] += n
        return step.node_id, step.made_progress

    def _evict_device_leaf(self, node_id: int, tracker: dict) -> None:
        step = self.tree_core.evict_device_leaf(node_id)
        self._apply_eviction_result(step)
        for ct, n in step.tracker.items():
            tracker[ct] += n

    def _apply_eviction_result(self, step: EvictStep) -> None:
        """Free a step's slots before the next step looks at the pools."""
        try:
            self._drain_device_frees(step.device_frees)
        finally:
            self._apply_cache_actions(step.cache_actions)

    def _drain_device_frees(self, device_frees: dict) -> None:
        for ct in list(device_frees):
            self._apply_cache_action(FreeComponentDeviceSlot(device_frees.pop(ct), ct))

    # ---- locks

    def inc_lock_ref(self, node_id: int, skip_lock_components: tuple = ()) -> IncLockRefResult:
        """Lock ``node_id`` for a request; returns the receipt its release must give back."""
        node = self._node(node_id)
        self.tracer.op = "inc_lock_ref"
        result = self.tree_core.inc_lock_ref(node.id, tuple(skip_lock_components))
        if self.tracer.active: self.tracer.emit("lock.result", K.RESULT, (node,), delta=result.delta, uuids=tuple((str(ct), u) for ct, u in result.component_lock_uuids.items()))
        return result  # step: lock.result

    def dec_lock_ref(self, node_id: int, params: DecLockRefParams, skip_swa: bool = False) -> None:
        """Release the lock ``params`` (the receipt) records; ValueError, changing nothing,
        when the receipt is for another node or the locks it names are not there."""
        node = self._node(node_id)
        self._check_release(node, params, skip_swa)
        self.tracer.op = "dec_lock_ref"
        self.tree_core.dec_lock_ref(node.id, params, skip_swa)  # step: unlock.result
        if self.tracer.active: self.tracer.emit("unlock.result", K.RESULT, (node,))

    def lock(self, node_id: int, skip_lock_components: tuple = ()) -> TreeLock:
        return TreeLock(node_id, self.inc_lock_ref(node_id, skip_lock_components).to_dec_params())

    def unlock(self, lock: TreeLock | None) -> None:
        if lock is not None:
            self.dec_lock_ref(lock.node, lock.receipt, skip_swa=lock.swa_released)

    def release_swa(self, lock: TreeLock | None) -> None:
        """Give up the SWA part of ``lock`` early, once (the request decoded past its window)."""
        if lock is None or lock.swa_released:
            return
        node = self._node(lock.node)
        self._check_release(node, lock.receipt, swa_only=True)
        self.tracer.op = "release_swa"
        self._apply_eviction_result(self.tree_core.dec_swa_lock_only(node.id, lock.receipt))
        lock.swa_released = True

    # ---- the actions the tree hands over

    def _apply_cache_actions(self, actions: list) -> None:
        actions.reverse()
        try:
            while actions:
                self._apply_cache_action(actions.pop())
        finally:
            actions.reverse()

    def _apply_cache_action(self, action: object) -> None:
        alloc, tree, tr = self.token_to_kv_pool_allocator, self.tree_core, self.tracer
        if isinstance(action, FreeDeviceKV):
            for indices in action.indices:
                peers = self._swa_peers(indices) if tr.active else ()
                alloc.free_segment(indices)  # step: pool.free
                if tr.active: tr.emit("pool.free", K.FREE, (), slots=tuple(indices.tolist()), swa_slots=peers, pools=("full", "swa") if self.swa_enabled else ("full",))
        elif isinstance(action, FreeDeviceKVFullOnly):
            for indices in action.indices:
                alloc.free_full_segment(indices)  # step: pool.free_full
                if tr.active: tr.emit("pool.free_full", K.FREE, (), slots=tuple(indices.tolist()), pools=("full",))
        elif isinstance(action, FreeComponentDeviceSlot):
            self._free_component_slots(action.component_type, action.indices)
        elif isinstance(action, SWARebuild):
            swa_value = alloc.translate_loc_from_full_to_swa(action.source_value)  # type: ignore[union-attr]
            tree.set_component_device_value(action.node_id, ComponentType.SWA, swa_value)  # step: insert.swa.state
            if tr.active: tr.emit("insert.swa.state", UK.STATE, (tree.node_by_id(action.node_id),), component="swa", swa_slots=tuple(swa_value.tolist()))
        elif isinstance(action, RecoverSWAWithLockedFull):
            swa_alloc = self.token_to_kv_pool_allocator
            swa_value = swa_alloc.translate_loc_from_full_to_swa(action.incoming_full)  # type: ignore[union-attr]
            swa_alloc.clear_full_to_swa_mapping(action.incoming_full)  # type: ignore[union-attr]
            swa_alloc.set_full_to_swa_mapping(action.kept_full, swa_value)  # type: ignore[union-attr]
            swa_alloc.free_full_segment(action.incoming_full)
            tree.set_component_device_value(action.node_id, ComponentType.SWA, swa_value)  # step: insert.swa.state_locked
            if tr.active: tr.emit("insert.swa.state_locked", UK.STATE, (tree.node_by_id(action.node_id),), component="swa", swa_slots=tuple(swa_value.tolist()))
        elif isinstance(action, MambaEvictExcessPathStates):
            step = EvictStep()
            try:
                tree.evict_excess_path_states(action.tail_node_id, step.device_frees, step.cache_actions)
            finally:
                self._apply_eviction_result(step)
        else:
            raise AssertionError(f"unhandled cache action {type(action).__name__}")

    def _free_component_slots(self, component_type: ComponentType, indices: list) -> None:
        alloc, tr = self.token_to_kv_pool_allocator, self.tracer
        touched = {ComponentType.FULL: "slots", ComponentType.SWA: "swa_slots", ComponentType.MAMBA: "mamba_slots"}[component_type]
        for slots in indices:
            # the slots of this component's own pool (an SWA free is given the Full slots it pairs)
            own = (self._swa_peers(slots) if component_type == ComponentType.SWA else tuple(slots.reshape(-1).tolist())) if tr.active else ()
            if component_type == ComponentType.FULL:
                full = alloc.full_attn_allocator if self.swa_enabled else alloc  # type: ignore[union-attr]
                full.free_segment(slots)  # step: pool.free_component
            elif component_type == ComponentType.SWA:
                alloc.free_swa_segment(slots)  # type: ignore[union-attr]
            else:
                self.mamba_pool.free(slots)  # type: ignore[union-attr]
            if tr.active: tr.emit("pool.free_component", K.FREE, (), component=str(component_type), **{touched: own})

    def _swa_peers(self, full_slots) -> tuple:
        """The SWA slots paired with ``full_slots`` now (before a free unpairs them)."""
        if not self.swa_enabled:
            return ()
        peers = self.token_to_kv_pool_allocator.translate_loc_from_full_to_swa(full_slots)  # type: ignore[union-attr]
        return tuple(int(p) for p in peers.tolist() if p > 0)

    # ---- sizes, paths, nodes (as SGLang names them)

    def evictable_size(self) -> int:
        return self.tree_core.evictable_size()

    def protected_size(self) -> int:
        return self.tree_core.protected_size()

    def full_evictable_size(self) -> int:
        return self.tree_core.evictable_size()

    def full_protected_size(self) -> int:
        return self.tree_core.protected_size()

    def swa_evictable_size(self) -> int:
        return self.tree_core.component_evictable_size(ComponentType.SWA)

    def swa_protected_size(self) -> int:
        return self.tree_core.component_protected_size(ComponentType.SWA)

    def mamba_evictable_size(self) -> int:
        return self.tree_core.component_evictable_size(ComponentType.MAMBA)

    def mamba_protected_size(self) -> int:
        return self.tree_core.component_protected_size(ComponentType.MAMBA)

    def component_evictable_size(self, component_type: ComponentType) -> int:
        return self.tree_core.component_evictable_size(component_type)

    def component_protected_size(self, component_type: ComponentType) -> int:
        return self.tree_core.component_protected_size(component_type)

    def total_size(self) -> tuple[int, int]:
        return self.tree_core.total_size()

    def path_device_indices(self, node_id: int):
        """The Full slots on the path from the root to ``node_id``."""
        return self.tree_core.collect_full_device_indices(self._node(node_id).id)

    def resolve_node_handle(self, node_id: int):
        return self._node(node_id)

    @property
    def root_node(self):
        return self.tree_core.root_node

    @property
    def observer(self) -> Callable | None:
        return self.tracer.observer

    @observer.setter
    def observer(self, callback: Callable | None) -> None:
        """Attach a callable that receives every micro-step as an Event (None detaches)."""
        self.tracer.observer = callback
