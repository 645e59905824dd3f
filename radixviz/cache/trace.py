"""Trace events: one per micro-step, each named by the engine that made it.

The API an engine uses (RadixCache and ModernRadixCache share it)::

    self.tracer = Tracer(__name__, self.snapshot)   # the engine module names the source
    tr = self.tracer                                # once per public call
    tr.op = "match_prefix"                          # the public method running
    node.last_access_time = self._tick()            # step: match.visit
    if tr.active: tr.emit("match.visit", K.VISIT, (node,), at=start)

- ``tr.active`` is a plain attribute, False while nobody listens, so the guarded emit costs
  one attribute test; the arguments are not even built.
- ``emit(step, kind, nodes, **data)`` sends one Event to the observer. ``step`` is a stable
  label, unique within the engine module, for the line that did the work; ``kind`` says what
  sort of step it was (views narrate by kind): one of the shared ``EventKind``s, or a kind of
  the engine's own (a string, or its own str enum), declared with its words in its registry
  line (``EngineSpec.kinds``): the kinds are open. ``nodes`` are the live nodes it touched (the
  event keeps their ids); ``data`` holds immutable details. A step that frees or takes slots
  of a component other than the first names it (``component="window"``) and lists the slots
  under that component's ``touched`` key (contract.py). Capture an old value before the
  change and pass it (``old=...``): never recompute it backwards.
- The tree must be up to date before the emit: the event carries ``snapshot()`` of the whole
  tree, and snapshots stay correct only because every mutation calls
  ``snapshot.invalidate(node)`` itself (tracing or not).
- Marker convention: the line that does a step ends with ``# step: LABEL``. Nothing in this
  package reads those comments; views find them (radixviz/render/source_map.py) to show the
  line an event came from, and show the label when no source file is installed.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING
from collections.abc import Callable

from .snapshot import (LazyTree, TreeSnapshot, count_touches, header_of, picture, root_noted,
                       touched_since)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class EventKind(str, enum.Enum):
    """The kinds of step every engine may take (an engine adds its own: ``kind_name``)."""
    VISIT = "visit"              # a helper stepped onto a node and refreshed its access time
    COMPARE = "compare"          # an edge was compared with the rest of the key
    SPLIT = "split"              # an edge was cut in two
    APPEND = "append"            # a node's slots were added to the match result
    CREATE = "create"            # a new leaf was hung under a node
    EVICTABLE = "evictable"      # evictable size changed (from, to, why)
    HEAP = "heap"                # eviction takes the leaves from a heap ordered by last access
    POP = "pop"                  # the least recently used leaf came off the heap
    SKIP = "skip"                # that leaf is referenced, so it stays
    FREE = "free"                # the leaf's slots went back to the pool
    DELETE = "delete"            # the leaf left the tree
    PUSH_PARENT = "push_parent"  # its parent became a leaf and joined the heap
    REF = "ref"                  # a reference count changed (from, to)
    RESULT = "result"            # the public call returned
    # the 2026 engine's own steps
    PAGE_CUT = "page_cut"        # a match key was cut to whole pages (the partial tail dropped)
    HIT = "hit"                  # an insert raised a node's hit count (from, to)
    PRIORITY = "priority"        # an insert raised a node's priority to its own (from, to)
    # the host tier's steps (the hierarchical cache)
    HOST_HIT = "host_hit"        # a matched node's KV is on the host only: it counts as a host hit
    WRITE = "write"              # a device-to-host copy was issued (host slots taken, copy started)
    LOAD = "load"                # a host-to-device copy was issued (device slots taken)
    ACK = "ack"                  # a check found a copy finished: the node is released
    DEMOTE = "demote"            # a backed-up node lost its device slots; its host copy stays
    HOST_FREE = "host_free"      # a node's host slots went back to the host pool
    REFILL = "refill"            # an insert gave a host-only node device slots again
    KV_EVENT = "kv_event"        # a KV event was queued: a page stored, a page removed, all cleared


# steps that change only their first node's own fields (an access time, a count)
FIELD_KINDS = frozenset({EventKind.VISIT, EventKind.REF, EventKind.HIT, EventKind.PRIORITY})
# steps that change no node (a comparison, a counter of the tree, a heap kept beside it)
QUIET_KINDS = frozenset({EventKind.COMPARE, EventKind.APPEND, EventKind.RESULT, EventKind.PAGE_CUT,
                         EventKind.HEAP, EventKind.POP, EventKind.SKIP, EventKind.EVICTABLE,
                         EventKind.PUSH_PARENT})
MAX_LAZY_STEPS = 4096   # a picture is made whole at least this often (reading one walks back this far)

# steps only the 2026 engine takes (the 2024 engine emits every other kind)
MODERN_ONLY_KINDS = frozenset({EventKind.PAGE_CUT, EventKind.HIT, EventKind.PRIORITY})
# steps only an engine with a host tier takes
HOST_TIER_KINDS = frozenset({EventKind.HOST_HIT, EventKind.WRITE, EventKind.LOAD, EventKind.ACK,
                             EventKind.DEMOTE, EventKind.HOST_FREE, EventKind.REFILL})
# steps only a 2026 cache with KV events enabled takes
KV_EVENT_KINDS = frozenset({EventKind.KV_EVENT})


def kind_name(kind: str) -> str:
    """A step's kind as views and frames name it: the value of a shared ``EventKind`` (or of
    an engine's own str enum), or an engine's own kind as it is."""
    return kind.value if isinstance(kind, enum.Enum) else kind


@dataclass(frozen=True, slots=True)   # slots: a session keeps one per step
class Event:
    seq: int                 # position in this cache's event stream
    kind: str                # an EventKind, or a kind the engine declares (EngineSpec.kinds)
    step: str                # the engine's label for the line that did it, e.g. "match.compare"
    op: str                  # the public method running: match_prefix, insert, evict, ...
    source: str              # the engine module that emitted it, e.g. "radixviz.engines.v2024.cache"
    nodes: tuple             # ids of the nodes this step touches
    data: MappingProxyType   # step details (immutable values only)
    picture: TreeSnapshot | LazyTree   # the whole tree just after this step (``tree`` reads it)

    @property
    def tree(self) -> TreeSnapshot:
        """The whole tree just after this step."""
        return picture(self.picture)

    def __getitem__(self, name: str):
        return self.data[name]


class Tracer:
    """Reports an engine's steps to one observer; owned by the engine, costs nothing idle."""

    __slots__ = ("source", "active", "seq", "op", "_observer", "_snapshot", "_last", "_live_root")

    def __init__(self, source: str, snapshot: Callable[[], TreeSnapshot]) -> None:
        self.source = source        # module name of the engine, copied into every event
        self.active = False         # an observer is attached
        self.seq = 0                # events emitted so far
        self.op = ""                # the public method running
        self._observer: Callable[[Event], None] | None = None
        self._snapshot = snapshot
        self._last: TreeSnapshot | LazyTree | None = None   # the picture of the last step
        self._live_root: Any = None                          # the live root it was taken of

    @property
    def observer(self) -> Callable[[Event], None] | None:
        return self._observer

    @observer.setter
    def observer(self, callback: Callable[[Event], None] | None) -> None:
        """Attach a callable that receives every step as an Event (None detaches)."""
        self._observer = callback
        self.active = callback is not None
        self._last = None   # steps nobody watched came between: the next picture is whole

    def emit(self, step: str, kind: str, nodes: Sequence[Any] = (), **data: Any) -> None:
        self.emit_from(self.source, step, kind, nodes, data)

    def emit_from(self, source: str, step: str, kind: str, nodes: Sequence[Any], data: dict) -> None:
        """``emit`` for a step written in another module of the same engine (``branch``)."""
        observer = self._observer
        assert observer is not None, "emit() only while active: if tr.active: tr.emit(...)"
        self.seq += 1
        tree = self._picture(kind, nodes)
        count_touches()
        observer(Event(self.seq, kind, step, self.op, source,
                       tuple([n.id for n in nodes]), MappingProxyType(data), tree))

    def _picture(self, kind: str, nodes: Sequence[Any]) -> TreeSnapshot | LazyTree:
        """The tree after this step. A step that changed no node, or only its first node's
        own fields (and invalidated nothing else since the last step), gets a LazyTree: the
        picture before it and that node's new snapshot, made into a tree when read. Any
        other step gets the whole tree (its unchanged subtrees shared with the one before)."""
        last, touched = self._last, touched_since()
        field = kind in FIELD_KINDS and bool(nodes)
        if last is not None and touched is not None and (field or kind in QUIET_KINDS) and \
                (field or not touched) and all(n is nodes[0] for n in touched) and \
                (not isinstance(last, LazyTree) or last.steps < MAX_LAZY_STEPS):
            header, live_root, make = header_of(self._snapshot)
            if live_root is not None and live_root is self._live_root:
                self._last = LazyTree(last, header, make(nodes[0], ()) if field else None)
                return self._last
        self._last = tree = self._snapshot()
        self._live_root = root_noted()
        return tree

    def branch(self, source: str) -> TracerBranch:
        """This tracer as seen from module ``source``, where an engine split across files
        writes some of its steps: same observer, same op, one numbering of events."""
        return TracerBranch(self, source)


class TracerBranch:
    """A module's view of its engine's Tracer: its steps carry that module as their source."""

    __slots__ = ("root", "source")

    def __init__(self, root: Tracer, source: str) -> None:
        self.root, self.source = root, source

    @property
    def active(self) -> bool:
        return self.root.active

    @property
    def op(self) -> str:
        return self.root.op

    @op.setter
    def op(self, value: str) -> None:
        self.root.op = value

    def emit(self, step: str, kind: str, nodes: Sequence[Any] = (), **data: Any) -> None:
        self.root.emit_from(self.source, step, kind, nodes, data)
