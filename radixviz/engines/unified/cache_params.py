"""What the unified cache's calls take and return, after ``mem_cache/base_prefix_cache.py``
of v0.5.23 (``MatchPrefixParams``, ``InsertParams``, ``EvictParams``, ``MatchResult``,
``InsertResult``, ``EvictResult``, ``IncLockRefResult``, ``DecLockRefParams``, ``TreeLock``).

The fields a learner never sees (host hits, sessions, rotation bases, adopted ranges, PD and
storage flags) are left out. radixviz adds ``device_indices`` and ``stop`` to a match result:
the slots SGLang leaves the caller to gather (``path_device_indices``), and where and why
the match stopped short of the tokens the tree holds.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, NamedTuple

from .node import ComponentType

if TYPE_CHECKING:
    import torch


@dataclasses.dataclass
class MatchPrefixParams:
    key: tuple
    # Mamba: copy the matched state into the request's own slot (copy-on-write)
    cow_mamba: bool = False
    req: Req | None = None


@dataclasses.dataclass
class InsertParams:
    key: tuple | None = None
    value: torch.Tensor | None = None
    # Mamba: the state slot the insert hands to the tree
    mamba_value: torch.Tensor | None = None
    # the request's tokens below this are the tree's own slots: never freed as duplicates
    prev_prefix_len: int = 0
    # per component, how many leading tokens the request already freed (SWA: out of window)
    component_evicted_seqlens: dict = dataclasses.field(default_factory=dict)
    # the request inserted [0, here) before: only nodes past it count a hit
    inserted_len: int = 0
    priority: int = 0

    def get_evicted_seqlen(self, component_type: ComponentType) -> int:
        return self.component_evicted_seqlens.get(component_type, 0)

    def set_evicted_seqlen(self, component_type: ComponentType, length: int) -> None:
        self.component_evicted_seqlens[component_type] = length


@dataclasses.dataclass
class InsertResult:
    prefix_len: int
    last_device_node: int | None = None
    # Mamba: the target already held a state, so the one passed in was not taken
    mamba_exist: bool = False


@dataclasses.dataclass
class EvictParams:
    num_tokens: int = 0       # Full KV tokens
    swa_num_tokens: int = 0   # sliding-window KV tokens
    mamba_num: int = 0        # Mamba states


@dataclasses.dataclass
class EvictResult:
    num_tokens_evicted: int = 0
    swa_num_tokens_evicted: int = 0
    mamba_num_evicted: int = 0


class MatchStop(NamedTuple):
    """Why a match handed back less than the walk reached (radixviz's addition).

    ``node`` is the deepest node the walk visited, ``verdicts`` what each component's
    validator said of it (False: it refused), and ``reasons`` a word per refusing component.
    Empty ``refused`` means the walk's end was accepted: the tree held no more."""

    node: int
    verdicts: tuple          # ((ComponentType, bool), ...) in component order
    reasons: tuple           # ((ComponentType, str), ...) for the refusals

    @property
    def refused(self) -> tuple:
        return tuple(ct for ct, ok in self.verdicts if not ok)


class MatchResult(NamedTuple):
    device_prefix_len: int
    last_device_node: int          # a node id, as SGLang's NodeId
    best_match_node: int
    # the last page-aligned position of the Full-KV hit past the reusable SWA window
    swa_branching_seqlen: int | None = None
    # the last checkpoint-grid position of the Full-KV hit past the last Mamba state
    mamba_branching_seqlen: int | None = None
    # tokens the Full KV alone would give, whatever the other components say
    full_kv_hit_length: int = 0
    last_visited_node_id: int | None = None
    device_indices: torch.Tensor | None = None
    stop: MatchStop | None = None


@dataclasses.dataclass
class IncLockRefResult:
    """The receipt ``inc_lock_ref`` returns: the release must replay it on the same node.

    ``component_lock_uuids[SWA]`` is the window lock's boundary stamp, None when the lock
    reached the root before a window was covered."""

    delta: int | None = None
    node_id: int | None = None
    skipped_lock_components: tuple = ()
    component_lock_uuids: dict = dataclasses.field(default_factory=dict)

    def set_lock_uuid(self, component_type: ComponentType, uuid: int | None) -> None:
        self.component_lock_uuids[component_type] = uuid

    def to_dec_params(self) -> DecLockRefParams:
        return DecLockRefParams(node_id=self.node_id,
                                skipped_lock_components=tuple(self.skipped_lock_components),
                                component_lock_uuids=dict(self.component_lock_uuids))


@dataclasses.dataclass
class DecLockRefParams:
    node_id: int | None = None
    skipped_lock_components: tuple = ()
    component_lock_uuids: dict = dataclasses.field(default_factory=dict)

    def get_lock_uuid(self, component_type: ComponentType) -> int | None:
        # a missing entry is an error, never "the lock reached the root" (SGLang: KeyError)
        return self.component_lock_uuids[component_type]


@dataclasses.dataclass
class TreeLock:
    """One holder's lock: release replays ``receipt``; ``swa_released`` marks the window part
    given up early (``release_swa``), so neither release takes it twice."""

    node: int
    receipt: DecLockRefParams
    swa_released: bool = False


@dataclasses.dataclass
class Req:
    """The part of a request a copy-on-write match fills in: the request's own Mamba slot (made
    if it has none) and the slot whose state was copied into it."""

    mamba_pool_idx: torch.Tensor | None = None
    mamba_cow_src_index: torch.Tensor | None = None
