"""Frames: what the stepper shows at one micro-step. Immutable, so stepping back is free."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from radixviz.cache import TreeSnapshot
from radixviz.cache.snapshot import picture
from radixviz.cache.recent import recent_property

if TYPE_CHECKING:
    from radixviz.cache.contract import Component

    from .parser import Op

EMPTY: MappingProxyType[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class PoolSnapshot:
    """Every declared pool at one step: the facade's KV pool (the tree's first component)
    and, in declared order, the pools of the components after it that have one
    (contract.Component.pooled: a host pool, a window's pool)."""
    refcounts: Sequence       # per slot: 0 free, 1 one holder, 2+ shared (a tuple, or a
                              # SlotCounts sharing unchanged slots with the step before)
    picture: Any              # the tree, to tell which node owns a slot (``tree`` reads it)
    more: tuple = ()          # per further pool, per slot: 0 free, else how many hold it

    @property
    def tree(self) -> TreeSnapshot:
        return picture(self.picture)

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

    # ------------------------------------------------ the further pools, by declared order

    @cached_property
    def pooled(self) -> tuple[Component, ...]:
        """The components whose pools ``more`` pictures, in its order."""
        return tuple(c for c in self.tree.components[1:] if c.pooled) if self.tree is not None else ()

    def counts(self, index: int) -> Sequence:
        """Pool ``index``'s counts per slot (0: the facade's pool, 1 on: ``more``)."""
        return self.refcounts if index == 0 else self.more[index - 1]

    def holders(self, index: int) -> tuple:
        """Per slot of pool ``index``: the node snapshot whose part holds it there, or None."""
        return _holders(self, index)


_HOLDERS: dict = {}   # (id of a PoolSnapshot, pool index) -> holders, for the newest few only


def _holders(pool: PoolSnapshot, index: int) -> tuple:
    key = (id(pool), index)
    known = _HOLDERS.get(key)
    if known is not None and known[0] is pool:
        return known[1]
    component = pool.tree.components[0] if index == 0 else pool.pooled[index - 1]
    at = pool.tree.components.index(component)
    found: list = [None] * len(pool.counts(index))
    for node in pool.tree.root.walk():
        if not node.key:
            continue
        part = node.parts[at]
        for slot in part.slots or ():
            if 0 <= slot < len(found):
                found[slot] = node
    if len(_HOLDERS) > 16:
        _HOLDERS.clear()
    _HOLDERS[key] = (pool, tuple(found))
    return _HOLDERS[key][1]


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
    more_slots: tuple = ()         # per further pool (PoolSnapshot.more), the slots this step touches


@dataclass(frozen=True, slots=True)
class Frame:
    index: int                     # position in Session.frames
    op_index: int                  # the OpRecord this frame belongs to
    kind: str                      # an EventKind value, or op / alloc / free_dup / matcher / reset
                                   # (start: Session.live_frame, before any step)
    data: MappingProxyType         # the step's details
    picture: Any                   # the tree after the step: a TreeSnapshot, or a LazyTree
                                   # made into one when ``tree`` is first read
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
    def tree(self) -> TreeSnapshot:
        return picture(self.picture)

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
