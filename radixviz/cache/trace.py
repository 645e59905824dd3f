"""Trace events: one per micro-step, with the engine line that made it."""
from __future__ import annotations

import ast
import enum
import sys
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Callable

from .snapshot import TreeSnapshot, clear_all, invalidate, snapshot_node


class EventKind(str, enum.Enum):
    VISIT = "visit"              # a helper stepped onto a node and refreshed its access time
    COMPARE = "compare"          # an edge was compared with the rest of the key
    SPLIT = "split"              # an edge was cut in two
    APPEND = "append"            # a node's slots were added to the match result
    CREATE = "create"            # a new leaf was hung under a node
    EVICTABLE = "evictable"      # evictable size changed (from, to, why)
    HEAP = "heap"                # eviction collected the leaves into a heap
    POP = "pop"                  # the least recently used leaf came off the heap
    SKIP = "skip"                # that leaf is referenced, so it stays
    FREE = "free"                # the leaf's slots went back to the pool
    DELETE = "delete"            # the leaf left the tree
    PUSH_PARENT = "push_parent"  # its parent became a leaf and joined the heap
    REF = "ref"                  # a reference count changed (from, to)
    RESULT = "result"            # the public call returned


@dataclass(frozen=True)
class Event:
    seq: int                 # position in this cache's event stream
    kind: EventKind
    op: str                  # the public method running: match_prefix, insert, evict, ...
    nodes: tuple             # ids of the nodes this step touches
    data: MappingProxyType   # step details (immutable values only)
    tree: TreeSnapshot       # the whole tree just after this step
    file: str
    line: int                # the engine line that did the step
    function: str

    def __getitem__(self, name):
        return self.data[name]


def _is_emit_call(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in ("_emit", "_step")


def _is_trace_statement(stmt: ast.stmt) -> bool:
    """``if self._trace: self._emit(...)`` or a bare ``self._emit(...)`` / ``self._step(...)``."""
    if isinstance(stmt, ast.Expr):
        return _is_emit_call(stmt.value)
    return isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Attribute) \
        and stmt.test.attr == "_trace" and not stmt.orelse


@lru_cache(maxsize=None)
def _trace_map(filename: str) -> tuple:
    """(emit line -> action line, the set of lines that exist only for tracing)."""
    with open(filename, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    action: dict = {}
    trace_only: set = set()

    def visit_block(header_line: int, body: list) -> None:
        last_real = header_line
        for stmt in body:
            if _is_trace_statement(stmt):
                for line in range(stmt.lineno, stmt.end_lineno + 1):
                    action[line] = last_real
                    trace_only.add(line)
                continue
            last_real = stmt.lineno
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(stmt, field, None)
                if block and isinstance(block[0], (ast.stmt, ast.excepthandler)):
                    visit_block(stmt.lineno, block)

    visit_block(0, tree.body)
    return MappingProxyType(action), frozenset(trace_only)


def action_line(filename: str, emit_line: int) -> int:
    """The statement a trace call reports on: the one just before it in its block."""
    return _trace_map(filename)[0].get(emit_line, emit_line)


def trace_only_lines(filename: str) -> frozenset:
    """Lines of an engine file that exist only to emit events (a code view may dim them)."""
    return _trace_map(filename)[1]


# steps after which the nodes they name look different in a snapshot
_CHANGES_NODES = frozenset({EventKind.VISIT, EventKind.SPLIT, EventKind.CREATE, EventKind.DELETE,
                            EventKind.REF})


class Traced:
    """The reporting side of a cache: an observer that receives every micro-step as an Event,
    and snapshots of the tree. The cache provides ``root_node``, ``_evictable``, ``_clock``
    and ``buggy_match``, and sets ``_op`` to the public method running."""

    _observer: Callable[[Event], None] | None = None
    _trace = False    # an observer is attached; the engine tests this before each _emit
    _op = ""
    _seq = 0          # events emitted so far

    @property
    def observer(self):
        return self._observer

    @observer.setter
    def observer(self, callback: Callable[[Event], None] | None) -> None:
        """Attach a callable that receives every micro-step as an Event (None detaches)."""
        self._observer = callback
        self._trace = callback is not None
        clear_all(self.root_node)  # snapshots were not kept up to date while nobody watched

    def snapshot(self) -> TreeSnapshot:
        """An immutable picture of the whole tree as it is now."""
        if not self._trace:
            clear_all(self.root_node)
        return TreeSnapshot(snapshot_node(self.root_node), self._evictable, self._clock, self.buggy_match)

    def _emit(self, kind, nodes=(), **data) -> None:
        if kind in _CHANGES_NODES:
            for node in nodes:
                invalidate(node)
        frame = sys._getframe(1)  # the engine method that did the step
        filename = frame.f_code.co_filename
        self._seq += 1
        event = Event(self._seq, kind, self._op, tuple(n.id for n in nodes), MappingProxyType(data),
                      self.snapshot(), filename, action_line(filename, frame.f_lineno),
                      frame.f_code.co_name)
        self._observer(event)
