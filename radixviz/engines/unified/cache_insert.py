"""The unified tree's insert: a walk in steps (v0.5.23's ``begin_insert`` .. ``_insert_tail_step``
in ``unified_tree_core.py``).

WALK steps onto the next node, cutting it where the key parts ways; OVERLAP lets each
component claim the request's slots over an existing node (SWA restores a tombstone inside
the window) and frees the request's other copies of slots the tree already holds; COMMIT
hangs the rest of the key as a new leaf and lets each component attach its data; TAIL
refreshes the LRU lists. After any step that emitted an action other than a plain free the
walk pauses, the cache applies the actions, and the walk resumes (``_advance_insert``).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from ...cache.snapshot import invalidate
from ...cache.trace import EventKind as K
from .cache_actions import DEFERRABLE, FreeDeviceKV, FreeDeviceKVFullOnly
from .cache_component import LRURefreshPhase, TreeView
from .cache_params import InsertResult
from .node import BASE_COMPONENT_TYPE, ComponentType

if TYPE_CHECKING:
    from .cache_kinds import WingBranch
    from .cache_params import InsertParams
    from .node import UnifiedTreeNode


class _InsertPhase(enum.Enum):
    WALK = enum.auto()
    OVERLAP = enum.auto()
    COMMIT = enum.auto()
    TAIL = enum.auto()


@dataclass
class InsertWalkState:
    phase: _InsertPhase
    node: UnifiedTreeNode
    key: tuple
    value: torch.Tensor
    params: InsertParams
    priority: int
    result: InsertResult
    total_prefix_length: int = 0
    is_new_leaf: bool = False
    target_node: UnifiedTreeNode | None = None
    overlap_node: UnifiedTreeNode | None = None
    overlap_prefix_len: int = 0
    pending_actions: list = field(default_factory=list)


class InsertStep:
    """What one run of the walk hands the cache: actions to apply, and the result at the end."""

    __slots__ = ("actions", "result")

    def __init__(self, actions: list, result: InsertResult | None = None) -> None:
        self.actions, self.result = actions, result


class TreeInsert(TreeView):
    """The insert half of UnifiedTreeCore (cache_tree.py)."""

    _ongoing_insert_walk_state: InsertWalkState | None
    tr_insert: WingBranch  # the steps written in this file

    def begin_insert(self, params: InsertParams) -> InsertStep:
        """Start an insert and run it to its first pause (or its end)."""
        if self._ongoing_insert_walk_state is not None:
            raise RuntimeError("an insert is already walking")
        key = params.key
        assert key is not None
        key = key[:len(key) // self.page_size * self.page_size]
        if params.value is not None:
            value = params.value[:len(key)]
        else:  # SGLang's habit: without slots, the token ids stand in for them
            value = torch.tensor(list(key), dtype=torch.int64, device=self.device)
        priority = params.priority or 0
        self._touch_node(self.root_node)
        self.root_node.priority = max(self.root_node.priority, priority)
        if len(key) == 0:
            return InsertStep([], InsertResult(prefix_len=0, mamba_exist=True, last_device_node=self.root_node.id))
        self._ongoing_insert_walk_state = InsertWalkState(
            _InsertPhase.WALK, self.root_node, key, value, params, priority, InsertResult(prefix_len=0))
        return self._advance_insert()

    def resume_insert(self) -> InsertStep:
        if self._ongoing_insert_walk_state is None:
            raise RuntimeError("no insert to resume")
        return self._advance_insert()

    def end_insert(self) -> list:
        """Finish the insert (an abort too): the actions it still owes."""
        state = self._ongoing_insert_walk_state
        self._ongoing_insert_walk_state = None
        return state.pending_actions if state is not None else []

    def _advance_insert(self) -> InsertStep:
        state = self._ongoing_insert_walk_state
        assert state is not None
        while True:
            flushed_len = len(state.pending_actions)
            if state.phase is _InsertPhase.WALK:
                self._insert_walk_step(state)
            elif state.phase is _InsertPhase.OVERLAP:
                self._insert_overlap_step(state)
            elif state.phase is _InsertPhase.COMMIT:
                self._insert_commit_step(state)
            else:
                self._insert_tail_step(state)
                self._ongoing_insert_walk_state = None
                return InsertStep(state.pending_actions, state.result)
            new_actions = state.pending_actions[flushed_len:]
            # pause only for an action that is more than a free
            if new_actions and not all(isinstance(a, DEFERRABLE) for a in new_actions):
                flushed, state.pending_actions = state.pending_actions, []
                return InsertStep(flushed)

    def _insert_walk_step(self, state: InsertWalkState) -> None:
        tr: WingBranch = self.tr_insert
        key = state.key
        child_key = self.child_key(key) if len(key) else None
        if child_key not in state.node.children:
            state.phase = _InsertPhase.COMMIT
            return
        node = state.node.children[child_key]
        self._touch_node(node)  # step: insert.visit
        if tr.active: tr.emit("insert.visit", K.VISIT, (node,), time=node.last_access_time)
        prefix_len = self.key_match(node.key, key)  # step: insert.compare
        if tr.active: tr.emit("insert.compare", K.COMPARE, (node,), common=prefix_len, edge=len(node.key), page_size=self.page_size)
        if prefix_len < len(node.key):
            child = node
            node = self._split_node(node.key, node, prefix_len)  # step: insert.split
            if tr.active: tr.emit("insert.split", K.SPLIT, (node, child), at=prefix_len)
        if state.priority > node.priority:
            node.priority = state.priority  # step: insert.priority
            invalidate(node)
            if tr.active: tr.emit("insert.priority", K.PRIORITY, (node,), new=state.priority)
        assert not node.evicted  # only a host tier keeps a node without Full KV
        state.overlap_node = node
        state.overlap_prefix_len = prefix_len
        state.phase = _InsertPhase.OVERLAP
        self._insert_overlap_step(state)

    def _insert_overlap_step(self, state: InsertWalkState) -> None:
        tr: WingBranch = self.tr_insert
        node = state.overlap_node
        assert node is not None
        prefix_len = state.overlap_prefix_len
        value_slice = state.value[:prefix_len]
        consumed_from = prefix_len
        for component in self.components:
            consumed_from = min(consumed_from, component.update_component_on_insert_overlap(
                node, prefix_len, state.total_prefix_length, value_slice, state.params, state.result,
                state.pending_actions))
        # the request's copies of slots the tree holds already, past its own matched prefix
        dup_start = max(0, state.params.prev_prefix_len - state.total_prefix_length)
        if dup_start < consumed_from:
            dup = value_slice[dup_start:consumed_from]
            abs_start = state.total_prefix_length + dup_start
            # below the request's SWA eviction point only the Full side is still its own
            swa_already_freed = min(max(state.params.get_evicted_seqlen(ComponentType.SWA) - abs_start, 0),
                                    dup.numel())
            if swa_already_freed > 0:
                state.pending_actions.append(FreeDeviceKVFullOnly([dup[:swa_already_freed]]))
            if swa_already_freed < dup.numel():
                state.pending_actions.append(FreeDeviceKV([dup[swa_already_freed:]]))  # step: insert.free_dup
            if tr.active: tr.emit("insert.free_dup", K.FREE, (node,), slots=tuple(dup.tolist()), full_only=swa_already_freed)
        self._finish_insert_walk_node(state, node, prefix_len)

    def _finish_insert_walk_node(self, state: InsertWalkState, node: UnifiedTreeNode,
                                 prefix_len: int) -> None:
        if state.total_prefix_length + prefix_len > state.params.inserted_len:
            node.hit_count += 1  # step: insert.hit
            invalidate(node)
            if self.tr_insert.active: self.tr_insert.emit("insert.hit", K.HIT, (node,), new=node.hit_count)
        state.node = node
        state.total_prefix_length += prefix_len
        state.key = state.key[prefix_len:]
        state.value = state.value[prefix_len:]
        state.overlap_node = None
        state.overlap_prefix_len = 0
        state.phase = _InsertPhase.WALK

    def _insert_commit_step(self, state: InsertWalkState) -> None:
        # a leaf lives on its Full KV alone: it is made even when another component will hold
        # only a tombstone for it (all of it outside the SWA window, say)
        if len(state.key):
            state.target_node = self._add_new_node(state.node, state.key, state.value, priority=state.priority)
            state.is_new_leaf = True
        else:
            state.target_node = state.node
        state.result.prefix_len = state.total_prefix_length
        state.result.last_device_node = state.target_node.id
        for component in self.components:
            component.commit_insert_component_data(state.target_node, state.is_new_leaf, state.params,
                                                   state.result, state.pending_actions)
        state.phase = _InsertPhase.TAIL

    def _insert_tail_step(self, state: InsertWalkState) -> None:
        target = state.target_node
        assert target is not None
        if target is not self.root_node:
            for component in self.components:
                if component.component_type != BASE_COMPONENT_TYPE:
                    component.refresh_lru(LRURefreshPhase.INSERT_END, target, self.root_node)
        if state.is_new_leaf and state.total_prefix_length + len(target.key) > state.params.inserted_len:
            target.hit_count += 1  # step: insert.leaf_hit
            invalidate(target)
