"""Frames: what the stepper shows at one micro-step. Immutable, so stepping back is free."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from radixviz.cache import TreeSnapshot
from radixviz.cache.recent import recent_property

if TYPE_CHECKING:
    from .parser import Op

EMPTY: MappingProxyType[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class PoolSnapshot:
    refcounts: Sequence       # per slot: 0 free, 1 one holder, 2+ shared (a tuple, or a
                              # SlotCounts sharing unchanged slots with the step before)
    tree: TreeSnapshot        # to tell which node owns a slot
    host: tuple = ()          # the host tier's pool, per slot: 0 free, 1 in use, 2 freed twice (hicache)

    @property
    def size(self) -> int:
        return len(self.refcounts)

    @recent_property
    def owners(self) -> tuple:
        """Per slot: id of the tree node owning it, or None."""
        owners: list = [None] * len(self.refcounts)
        for node in self.tree.root.walk():
            for slot in node.value:
                if 0 <= slot < len(owners):
                    owners[slot] = node.id
        return tuple(owners)

    @cached_property
    def free(self) -> int:
        return self.refcounts.count(0)

    @property
    def used(self) -> int:
        return self.size - self.free

    def state(self, slot: int) -> str:
        """free, tree (only the tree holds it), request (held outside the tree) or shared."""
        count, owner = self.refcounts[slot], self.owners[slot]
        if count == 0:
            return "free"
        if owner is None:
            return "request"
        return "tree" if count == 1 else "shared"

    # ------------------------------------------------------------ the host tier

    @property
    def host_size(self) -> int:
        return len(self.host)

    @cached_property
    def host_owners(self) -> tuple:
        """Per host slot: the tree node holding it there, or None."""
        owners: list = [None] * len(self.host)
        for node in self.tree.root.walk() if self.host else ():   # a host pool: host-tier nodes
            for slot in node.host_value or ():
                if 0 <= slot < len(owners):
                    owners[slot] = node
        return tuple(owners)

    @cached_property
    def host_used(self) -> int:
        return self.host.count(1)

    def host_state(self, slot: int) -> str:
        """free; host (its node has no device copy); both (the node is on both tiers);
        writing (a copy to it is in flight); or stray (taken, but no node holds it). Only the
        9fbe6800a bugs (engines/hicache/cache_head_bugs.py) make the last three: twice (in the free
        queue twice), held (free, yet a node in the tree holds it), and stray."""
        if self.host[slot] == 2:
            return "twice"
        if not self.host[slot]:
            return "held" if self.host_owners[slot] is not None else "free"
        node = self.host_owners[slot]
        if node is None:
            return "stray"
        if node.in_flight == "write":
            return "writing"
        return "host" if node.evicted else "both"


@dataclass(frozen=True, slots=True)   # slots: one of these per step kept
class Marks:
    """What a view highlights in a frame, gathered over the operation so far."""
    current: tuple = ()            # node ids this step touches
    path: tuple = ()               # node ids matched (slots taken) so far in this operation
    split: tuple = ()              # (upper id, lower id) of a split in this operation
    wrong: tuple = ()              # node ids whose tokens the buggy matcher wrongly took
    evicted: tuple = ()            # (id, key) of leaves deleted in this operation
    created: tuple = ()            # node ids created in this operation
    partial: tuple = ()            # (id, tokens taken) of edges a match took only the start of
    slots: tuple = ()              # pool slots this step touches
    host_slots: tuple = ()         # host pool slots this step touches (engine hicache)


@dataclass(frozen=True, slots=True)
class Frame:
    index: int                     # position in Session.frames
    op_index: int                  # the OpRecord this frame belongs to
    kind: str                      # an EventKind value, or op / alloc / free_dup / matcher / reset
                                   # (start: Session.live_frame, before any step)
    data: MappingProxyType         # the step's details
    tree: TreeSnapshot
    pool: PoolSnapshot
    marks: Marks
    source: str                    # module that did this step ("" before any step)
    label: str                     # its step label there (Event.step); views map it to a line
                                   # (render/source_map.py)
    nodes: tuple = ()              # node ids touched (same as marks.current)
    event: object = None           # the engine Event, for engine steps

    def __getitem__(self, name):
        return self.data[name]

    @property
    def number(self) -> int:
        """The step number a person reads, everywhere (status line, exports, --step, JSON):
        counted from 1, as the stepper always showed it."""
        return self.index + 1


@dataclass
class OpRecord:
    index: int
    op: Op
    result: dict = field(default_factory=dict)  # JSON-ready
    first_frame: int = 0
    last_frame: int = 0            # inclusive
    kv_events: tuple = ()          # the KV events the cache queued during it (kv_events.py)

    @property
    def number(self) -> int:
        """The operation's number as people read it: the first operation is 1."""
        return self.index + 1

    @property
    def frame_range(self) -> range:
        return range(self.first_frame, self.last_frame + 1)
