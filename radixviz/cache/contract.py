"""The engine contract: what every engine declares of its memory, and the typed calls the
facade (facade.py) makes of the cache it wraps. No UI, no torch at import, no ``Any``.

Memory is data (memory.py, re-exported here). An engine declares its **components**, the kinds of memory a node may hold
(device KV, host KV, a window's copy, a Mamba state, ...), each a ``Component``; the first is
the tree's backbone, the one the facade's pool (``Engine.pool``) holds. A snapshot says, per
node and component, what the node holds there (``NodePart``: slots, or None for a *tombstone*,
the data gone while the node stays, and a lock count), and per component what the tree holds
(``Held``: evictable and protected sizes). Each component with a pool of its own gives the
session a picture of it every step (``SlotPool``). Shared views draw all of this without
knowing the engine: one grid a pool, one part a node line, one entry in the JSON.

The same idea as SGLang v0.5.23's ``TreeComponent`` (``mem_cache/unified_cache/components/
base.py``), one level up: there a tree that knows nothing of memory asks its components; here
the shared code that knows no engine asks the snapshot's declared components.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from .memory import DEVICE, Component, Held, NodePart

if TYPE_CHECKING:
    import torch

    from .snapshot import TreeSnapshot
    from .trace import Event

__all__ = ["DEVICE", "CacheNode", "Component", "Declared", "Evicted", "FreedSlots", "Held", "Matched",
           "NodePart", "SlotPool", "TracedCache", "matched"]


class Declared(Protocol):
    """What the facade reads of its engine's registry line (engines.py ``EngineSpec``)."""
    @property
    def name(self) -> str: ...

    def badge(self, settings: Mapping[str, object]) -> str: ...

    def has(self, capability: str) -> bool: ...

    def lacks(self, capability: str) -> str: ...


class CacheNode(Protocol):
    """What shared code reads of an engine's live node (views read snapshots instead)."""
    @property
    def id(self) -> int: ...

    @property
    def key(self) -> tuple[Hashable, ...]: ...

    @property
    def parent(self) -> CacheNode | None: ...


class TracedCache(Protocol):
    """What the facade calls on the cache it wraps, in the same words for every engine; the
    rest (a match, an insert, a lock, in each release's own names) each facade subclass maps."""
    @property
    def root_node(self) -> CacheNode: ...

    @property
    def observer(self) -> Callable[[Event], None] | None: ...

    @observer.setter
    def observer(self, callback: Callable[[Event], None] | None) -> None: ...

    def snapshot(self) -> TreeSnapshot: ...

    def reset(self) -> None: ...

    def evictable_size(self) -> int: ...

    def total_size(self) -> int: ...


class SlotPool(Protocol):
    """A pool a session pictures at each step (the facade's KV pool, a host pool, a window's
    pool): one count a slot, 0 free, else how many hold it."""
    @property
    def size(self) -> int: ...

    def picture_version(self) -> Hashable:
        """Changes whenever a slot's count does: an unchanged pool reuses its last picture."""
        ...

    def picture(self, previous: Sequence[int] | None) -> Sequence[int]:
        """Every slot's count now, sharing what it can with ``previous``, this pool's last."""
        ...


class Matched(NamedTuple):
    """A match: the slots of the longest cached prefix, and the node where it ends."""
    slots: torch.Tensor
    last_node: CacheNode


def matched(pair: tuple[torch.Tensor, CacheNode]) -> Matched:
    """``Matched`` from a cache's own ``(slots, node)`` pair, without NamedTuple's argument
    parsing: a match is the simulation's most frequent call (350,000 in a 3,000-request run)."""
    return tuple.__new__(Matched, pair)


class Evicted(NamedTuple):
    """An eviction of one component: which, and how many of its slots became free."""
    component: str
    freed: int


FreedSlots = Callable[["torch.Tensor"], None]   # told of each stretch of slots an eviction frees
