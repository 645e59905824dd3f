"""``SWAComponent``: sliding-window KV (v0.5.23's ``components/swa.py``).

A sliding-window layer reads only the last W tokens. So a match may end on a node only if
the nodes just above it still hold an unbroken window of SWA KV: the validator counts the
tokens since the last tombstone and accepts once there are W. Inside nodes lose their SWA KV
first (a tombstone: the Full KV stays, the node stays); an insert whose own slots are still
in its window gives a tombstone its data back; a lock holds one window, not the whole path.
Each node's SWA value is its Full slots' peers in the SWA pool (cache_pools.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...cache.snapshot import invalidate
from ...cache.trace import EventKind as K
from .cache_actions import FreeDeviceKVFullOnly, RecoverSWAWithLockedFull, SWARebuild
from .cache_component import CacheView, LRURefreshPhase, Validator
from .cache_kinds import UnifiedKind as UK
from .cache_swa_evict import SWAComponentEviction
from .node import BASE_COMPONENT_TYPE, ComponentType

if TYPE_CHECKING:
    import torch

    from .cache_params import InsertParams, InsertResult, MatchResult
    from .node import UnifiedTreeNode


class _SWAValidator(Validator):
    def __init__(self, window: int) -> None:
        self.window = window
        self.len = float("inf")  # nothing seen yet: no tombstone has broken the window

    def __call__(self, node: UnifiedTreeNode) -> bool:
        if node.component_data[ComponentType.SWA].value is None:
            self.len = 0  # the window starts again below this tombstone
            self.reason = "a tombstone: its sliding-window KV is gone"
            return False
        self.len += len(node.key)
        if self.len >= self.window:
            return True
        self.reason = f"only {self.len} of the {self.window} window tokens since the last tombstone"
        return False


class SWAComponent(SWAComponentEviction):
    component_type = ComponentType.SWA

    def __init__(self, cache: CacheView, sliding_window_size: int) -> None:
        super().__init__(cache)
        self.sliding_window_size = sliding_window_size

    def refresh_lru(self, phase: LRURefreshPhase, node: UnifiedTreeNode, root_node: UnifiedTreeNode) -> None:
        # only the window a request reads moves to the recent end; older ancestors stay
        # evictable (a walk down refreshes nothing)
        if phase is LRURefreshPhase.WALKDOWN:
            return
        self.tree_core.lru_lists[self.component_type].reset_node_and_window_ancestors_mru(
            node, root_node, self.sliding_window_size + self.tree_core.page_size, self.node_has_component_data)

    def create_match_validator(self) -> Validator:
        return _SWAValidator(self.sliding_window_size)

    def finalize_match_result_in_tree_core(self, result: MatchResult, value_chunks: list,
                                           best_value_len: int) -> MatchResult:
        # the Full KV may reach past the last reusable window: the last page boundary of the
        # Full hit is where a window kept next time would make more of it reusable
        page = self.tree_core.page_size
        aligned_seqlen = result.full_kv_hit_length // page * page
        branching = aligned_seqlen if aligned_seqlen > result.device_prefix_len else None
        return result._replace(swa_branching_seqlen=branching)

    # ---- insert

    @staticmethod
    def _segments(node: UnifiedTreeNode, start: int, end: int) -> list:
        # the span [start, end) ends at ``node``; an earlier split may have cut it in pieces
        segments = []
        while end > start:
            node_start = end - len(node.key)
            assert node_start >= start
            segments.append((node, node_start, end))
            end, node = node_start, node.parent
        return segments[::-1]

    def _clip_to_window(self, node: UnifiedTreeNode, start: int, end: int, window_start: int) -> int | None:
        """Where the request's live SWA KV starts within a tombstoned span, cutting the node
        there; None when the node holds SWA KV or the span is all outside the window."""
        if node.component_data[self.component_type].value is not None:
            return None
        assert window_start % self.tree_core.page_size == 0, "the SWA evicted length is whole pages"
        live_start = max(start, window_start)
        if live_start >= end:
            return None
        if live_start > start:
            self.tree_core._split_node(node.key, node, live_start - start)  # step: insert.swa.window_split
            if self.tr.active: self.tr.emit("insert.swa.window_split", K.SPLIT, (node.parent, node), at=live_start - start, why="the window starts here")
        return live_start

    def _publish_window(self, node: UnifiedTreeNode, cache_actions: list) -> None:
        cache_actions.append(SWARebuild(node.id, node.full_value()))

    def _recover_from_incoming(self, node: UnifiedTreeNode, incoming_full: torch.Tensor, cache_actions: list) -> None:
        full_cd = node.component_data[BASE_COMPONENT_TYPE]
        old_full = node.full_value()
        if full_cd.lock_ref > 0:
            # the locked Full slots stay; they take over the incoming slots' SWA peers
            cache_actions.append(RecoverSWAWithLockedFull(node.id, old_full, incoming_full))  # step: insert.swa.recover_locked
            if self.tr.active: self.tr.emit("insert.swa.recover_locked", UK.RECOVER, (node,), component="swa", kept=tuple(old_full.tolist()), incoming=tuple(incoming_full.tolist()))
            return
        full_cd.value = incoming_full.clone()  # step: insert.swa.recover
        invalidate(node)
        cache_actions.append(FreeDeviceKVFullOnly([old_full]))
        self._publish_window(node, cache_actions)
        if self.tr.active: self.tr.emit("insert.swa.recover", UK.RECOVER, (node,), component="swa", old=tuple(old_full.tolist()), new=tuple(incoming_full.tolist()))

    def update_component_on_insert_overlap(self, node: UnifiedTreeNode, prefix_len: int,
                                           total_prefix_len: int, value_slice: torch.Tensor,
                                           params: InsertParams, result: InsertResult,
                                           cache_actions: list) -> int:
        if params.prev_prefix_len >= total_prefix_len + prefix_len:
            return prefix_len  # all of it is the request's matched prefix: the tree's own slots
        window_start = params.get_evicted_seqlen(self.component_type)
        consumed_from = prefix_len
        for fragment, start, end in self._segments(node, total_prefix_len, total_prefix_len + prefix_len):
            live_start = self._clip_to_window(fragment, start, end, window_start)
            if live_start is None:
                continue
            self._recover_from_incoming(
                fragment, value_slice[live_start - total_prefix_len:end - total_prefix_len], cache_actions)
            consumed_from = min(consumed_from, live_start - total_prefix_len)
        return consumed_from

    def _maybe_split_leaf_for_swa_lock(self, leaf: UnifiedTreeNode) -> UnifiedTreeNode | None:
        """Cut a long fresh leaf so its last part is one window (whole pages): locking the
        leaf then holds one window of SWA KV, not the whole leaf. Returns the older part."""
        core = self.tree_core
        if leaf is core.root_node or leaf.component_data[self.component_type].lock_ref > 0:
            return None
        page = core.page_size
        tail_size = -(-self.sliding_window_size // page) * page
        leaf_len = len(leaf.key)
        if leaf_len <= tail_size:
            return None
        split_at = leaf_len - tail_size
        if page > 1 and (split_at % page != 0 or leaf_len % page != 0):
            return None
        new_parent = core._split_node(leaf.key, leaf, split_at)  # step: insert.swa.cap_leaf
        if self.tr.active: self.tr.emit("insert.swa.cap_leaf", K.SPLIT, (new_parent, leaf), at=split_at, why="a lock holds one window")
        return new_parent

    def commit_insert_component_data(self, node: UnifiedTreeNode, is_new_leaf: bool,
                                     params: InsertParams, result: InsertResult, cache_actions: list) -> None:
        if not is_new_leaf:
            return
        start = result.prefix_len
        end = start + len(node.key)
        for fragment, seg_start, seg_end in self._segments(node, start, end):
            live_start = self._clip_to_window(fragment, seg_start, seg_end,
                                              params.get_evicted_seqlen(self.component_type))
            if live_start is None:
                continue
            parent = self._maybe_split_leaf_for_swa_lock(fragment)
            # the older part first, so the tail ends up the more recent in the LRU list
            if parent is not None:
                self._publish_window(parent, cache_actions)
            self._publish_window(fragment, cache_actions)

    # ---- split

    def redistribute_on_node_split(self, new_parent: UnifiedTreeNode, child: UnifiedTreeNode) -> None:
        ct = self.component_type
        child_cd, parent_cd = child.component_data[ct], new_parent.component_data[ct]
        parent_cd.lock_ref = child_cd.lock_ref
        if child_cd.value is not None:
            split_len = len(new_parent.key)
            parent_cd.value = child_cd.value[:split_len].clone()
            child_cd.value = child_cd.value[split_len:].clone()
        else:
            parent_cd.value = None
        # the window's boundary stamp marks the node's older edge, which is now the parent's
        parent_cd.uuid, child_cd.uuid = child_cd.uuid, None
