"""``MambaComponent``: recurrent (Mamba / linear-attention) state (v0.5.23's ``components/mamba.py``).

A recurrent layer carries one state that sums up every token so far, and a state cannot be
cut: reuse can only start where a state was kept. So a node holds at most one state (for the
tokens up to its end), an insert leaves one only on its last node, a split leaves the prefix
without, and a match may end only on a node that holds one. The request gets a copy of that
state (copy-on-write): its own slot, which it then runs on. A lock holds the one node.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...cache.snapshot import invalidate
from ...cache.trace import EventKind as K
from .cache_actions import MambaEvictExcessPathStates
from .cache_auxiliary import AuxiliaryComponent
from .cache_component import CacheView, DataValidator, LRURefreshPhase, Validator
from .cache_kinds import UnifiedKind as UK
from .cache_params import EvictParams
from .node import ComponentType

if TYPE_CHECKING:
    from .cache_params import (DecLockRefParams, IncLockRefResult, InsertParams, InsertResult,
                               MatchPrefixParams, MatchResult)
    from .node import UnifiedTreeNode


class MambaComponent(AuxiliaryComponent):
    component_type = ComponentType.MAMBA

    def __init__(self, cache: CacheView, mamba_cache_chunk_size: int, page_size: int,
                 mamba_max_states_per_path: int = -1) -> None:
        super().__init__(cache)
        self.mamba_cache_chunk_size = mamba_cache_chunk_size
        # where a kept state's depth must land: the chunk grid and the tree's pages both
        self.mamba_checkpoint_grid = math.lcm(mamba_cache_chunk_size, page_size)
        self.mamba_max_states_per_path = mamba_max_states_per_path

    def refresh_lru(self, phase: LRURefreshPhase, node: UnifiedTreeNode, root_node: UnifiedTreeNode) -> None:
        # a match uses one state, its last node's: only that one becomes recent
        if phase is LRURefreshPhase.MATCH_END and node.component_data[self.component_type].value is not None:
            self.tree_core.lru_lists[self.component_type].reset_node_mru(node)

    def create_match_validator(self) -> Validator:
        return DataValidator(self.component_type, "no Mamba state was kept at its end")

    def finalize_match_result_in_tree_core(self, result: MatchResult, value_chunks: list,
                                           best_value_len: int) -> MatchResult:
        # the Full KV may reach past the last state: the last grid point of the Full hit is
        # where the request should keep a state, so the next request can start there
        grid = self.mamba_checkpoint_grid
        aligned_seqlen = result.full_kv_hit_length // grid * grid
        branching = aligned_seqlen if aligned_seqlen > result.device_prefix_len else None
        return result._replace(mamba_branching_seqlen=branching)

    def finalize_match_result_in_cache(self, params: MatchPrefixParams, result: MatchResult) -> MatchResult:
        """The copy-on-write: the request gets its own slot holding the matched state."""
        if not params.cow_mamba:
            return result
        core, cache = self.tree_core, self.cache
        best = core.node_by_id(result.best_match_node)
        src_index = best.component_data[self.component_type].value
        if src_index is None:
            return result
        req = params.req
        assert req is not None, "a copy-on-write match needs the request"
        pool = cache.mamba_pool
        assert pool is not None
        dst = req.mamba_pool_idx
        if dst is None:
            dst_index = pool.alloc(1)
            if dst_index is None:
                # lock the match's window while evicting, so the eviction cannot take it
                receipt = cache.inc_lock_ref(result.best_match_node)
                cache.evict_for_alloc(EvictParams(num_tokens=0, mamba_num=1))
                dst_index = pool.alloc(1)
                cache.dec_lock_ref(result.best_match_node, receipt.to_dec_params())
                assert dst_index is not None, "no Mamba slot for the request"
            req.mamba_pool_idx = dst = dst_index[0]
        # SGLang records the source and copies before the batch runs; the copy is made here
        pool.copy_from(src_index, dst)  # step: match.mamba.copy
        req.mamba_cow_src_index = src_index
        if self.tr.active: self.tr.emit("match.mamba.copy", UK.COPY, (best,), component="mamba", src=int(src_index[0]), dst=int(dst), mamba_slots=(int(src_index[0]), int(dst)))
        return result

    # ---- insert: the state goes on the insert's last node

    def commit_insert_component_data(self, node: UnifiedTreeNode, is_new_leaf: bool,
                                     params: InsertParams, result: InsertResult, cache_actions: list) -> None:
        ct, core, tr = self.component_type, self.tree_core, self.tr
        assert params.mamba_value is not None
        cd = node.component_data[ct]
        if is_new_leaf:
            cd.value = params.mamba_value  # step: insert.mamba.state
            invalidate(node)
            core.lru_lists[ct].insert_mru(node)
            core.component_evictable_size_[ct] += self.reclaimable_value_len(node)
            if tr.active: tr.emit("insert.mamba.state", UK.STATE, (node,), component="mamba", slot=int(cd.value[0]), mamba_slots=(int(cd.value[0]),), new_leaf=True)
            self._emit_excess_path_states_eviction(node, cache_actions)
            return
        if cd.value is None:
            core.set_component_device_value(node.id, ct, params.mamba_value)  # step: insert.mamba.branch_state
            node.last_access_time = core.tick()
            invalidate(node)
            if tr.active: tr.emit("insert.mamba.branch_state", UK.STATE, (node,), component="mamba", slot=int(params.mamba_value[0]), mamba_slots=(int(params.mamba_value[0]),), new_leaf=False)
            self._emit_excess_path_states_eviction(node, cache_actions)
            return
        core.lru_lists[ct].reset_node_mru(node)  # step: insert.mamba.exists
        node.last_access_time = core.tick()
        invalidate(node)
        result.mamba_exist = True
        if tr.active: tr.emit("insert.mamba.exists", K.VISIT, (node,), component="mamba", unused=int(params.mamba_value[0]))

    def _emit_excess_path_states_eviction(self, tail: UnifiedTreeNode, cache_actions: list) -> None:
        if self.mamba_max_states_per_path >= 0:
            cache_actions.append(MambaEvictExcessPathStates(tail.id))

    def _evict_excess_path_states(self, tail: UnifiedTreeNode, device_frees: dict, cache_actions: list) -> None:
        """Keep at most the cap of states on the path to ``tail``: drop the shallowest ones
        that are neither the tail, a fork, locked, nor on a leaf (their Full KV stays)."""
        ct, core = self.component_type, self.tree_core
        holders = []
        node = tail
        while node is not None and node is not core.root_node:
            if node.component_data[ct].value is not None:
                holders.append(node)
            node = node.parent
        excess = len(holders) - self.mamba_max_states_per_path
        if excess <= 0:
            return
        tracker = dict.fromkeys(core.component_types, 0)
        for node in reversed(holders):
            if excess <= 0 or node is tail:
                break
            if node.component_data[ct].lock_ref > 0 or len(node.children) != 1:
                continue
            if node in core.evictable_device_leaves:
                continue
            core._evict_component_and_detach_lru(node, self, device_frees, cache_actions, tracker)  # step: insert.mamba.cap
            core._cascade_evict(node, self, tracker, device_frees, cache_actions)
            excess -= 1

    def redistribute_on_node_split(self, new_parent: UnifiedTreeNode, child: UnifiedTreeNode) -> None:
        # the state sums the tokens up to the child's end: the prefix has none of its own
        parent_cd = new_parent.component_data[self.component_type]
        parent_cd.value = None
        parent_cd.lock_ref = 0

    # ---- eviction

    def evict_component(self, node: UnifiedTreeNode, device_frees: dict, cache_actions: list) -> int:
        ct = self.component_type
        cd = node.component_data[ct]
        if cd.value is None:
            return 0
        device_frees.setdefault(ct, []).append(cd.value)
        freed = self.reclaimable_value_len(node)
        self.tree_core.component_evictable_size_[ct] -= freed
        cd.value = None  # step: evict.mamba.tombstone
        invalidate(node)
        if self.tr.active: self.tr.emit("evict.mamba.tombstone", UK.TOMBSTONE, (node,), component="mamba", freed=freed)
        return freed

    # ---- locks: the node alone

    def acquire_component_lock(self, node: UnifiedTreeNode, result: IncLockRefResult) -> IncLockRefResult:
        ct = self.component_type
        if node is self.tree_core.root_node:
            return result
        cd = node.component_data[ct]
        if cd.lock_ref == 0 and cd.value is not None:
            self._ledger_move(node, locking=True)
        cd.lock_ref += 1  # step: lock.mamba
        invalidate(node)
        if self.tr.active: self.tr.emit("lock.mamba", K.REF, (node,), component="mamba", old=cd.lock_ref - 1, new=cd.lock_ref)
        return result

    def release_component_lock(self, node: UnifiedTreeNode, params: DecLockRefParams | None) -> None:
        ct = self.component_type
        if node is self.tree_core.root_node:
            return
        cd = node.component_data[ct]
        assert cd.lock_ref > 0, f"Mamba release found no lock on node #{node.id}"
        if cd.lock_ref == 1 and cd.value is not None:
            self._ledger_move(node, locking=False)
        cd.lock_ref -= 1  # step: unlock.mamba
        invalidate(node)
        if cd.lock_ref == 0:
            self.tree_core._update_evictable_leaf_sets(node)
        if self.tr.active: self.tr.emit("unlock.mamba", K.REF, (node,), component="mamba", old=cd.lock_ref + 1, new=cd.lock_ref)
