"""What a session does differently for one engine: each engine's script operations, the
checks before them and the results they add, in a module of its own named by its registry
line (``EngineSpec.script``), loaded the first time a session opens that engine.

``EngineOps`` is the shared behaviour (the plain trie's): an engine's module subclasses it,
adds ``_do_NAME`` handlers for the operations its spec lists in ``ops`` (their ``def`` carries
the ``op.NAME`` marker, as the session's do), and overrides the hooks below. One object per
engine and session: what it keeps (the host tier's ``auto_sync``) lasts while the session
switches engines and back, as the session's own settings do.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from radixviz.cache.engines import EngineSpec, engine_spec

if TYPE_CHECKING:
    import torch

    from radixviz.cache.contract import CacheNode
    from radixviz.cache.facade import CacheEngine, Inserted
    from radixviz.cache.options import EngineSettings
    from radixviz.cache.snapshot import NodeSnapshot, TreeSnapshot

    from ..parser import Op
    from radixviz.script.frames import Frame


class SessionShape(Protocol):
    """What an engine's operations reach of the session that runs them. The session
    (session.py) imports this module, so these hooks are typed by its shape rather than by
    its class: the two modules do not import each other, and mypy still checks that the
    session fits where it hands itself over (``engine_ops``)."""
    pool_size: int
    engine: CacheEngine                 # the facade's Engine of the session's engine now
    options: dict[str, object]        # the session's one value per option (a script line changes them)
    knowingly_broken: bool

    def _fresh_engine(self, spec: EngineSpec, settings: EngineSettings | None = None) -> None: ...

    def set_option(self, name: str, value: object) -> None: ...

    def _step(self, kind: str, step: str, source: str = ..., **data: object) -> None: ...


# the host tier's measures a challenge's goal may name (0 where there is no second tier)
TIER_MEASURES = ("host_only", "host_used", "in_flight", "unreachable")


class EngineOps:
    """The hooks a session calls; this base is what an engine without a module of its own gets."""

    # what frees room when an insert does not fit (the pool-full refusal names them)
    ways_to_room = "evict, unlock or reset"
    # whether an insert may carry a priority, and keys a namespace (``ns lora-a``)
    takes_priority = False
    takes_namespace = False
    # whether an insert copies its slots elsewhere while it runs (the host tier's write), so
    # a KV session fills them before the insert instead of after
    fills_before_insert = False

    def __init__(self, session: SessionShape):
        self.session = session
        # nodes the match about to run takes wrongly, marked as its walk reaches them (the
        # 2024 engine's buggy matcher, #7): emptied before each operation
        self.wrong_ahead: set[int] = set()

    def handler(self, name: str) -> Callable[[Op], dict] | None:
        """The handler of an operation this engine brings (``sync``), or None."""
        return getattr(self, f"_do_{name.replace('-', '_')}", None)

    def precheck(self, op: Op, refuse: Callable[[str], object]) -> None:
        """Refuse (``refuse(message)`` raises), changing nothing, what this engine cannot do now."""

    def sync_first(self, op: Op) -> int:
        """Acknowledge what must be before ``op`` runs; return how many nodes were (0: none)."""
        return 0

    def opened(self) -> None:
        """An ``engine`` line opened this engine afresh: its switches start as they do."""

    def slots_for(self, need: int) -> int:
        """How many slots an insert of ``need`` tokens allocates (all of them, but under the
        2024 release's insert, #4)."""
        return need

    def before_match(self, op: Op) -> None:
        """Before a ``match`` walks the tree (the 2024 engine compares its two matchers here)."""

    def match(self, op: Op) -> tuple[torch.Tensor, CacheNode, dict]:
        """(slots, last node, the result's own entries) of a ``match``."""
        value, last_node = self.session.engine.match(op.key or (), op.ns)
        extra: dict[str, object] = {}
        if any(len(n.value) < len(n.key) for n in _path(last_node)):
            # a node holding fewer slots than tokens (insert-slots release, #4): shifted slots
            extra["misaligned"] = {"tokens": sum(len(n.key) for n in _path(last_node)), "slots": len(value),
                                   "from": _first_short(last_node)}
        return value, last_node, extra

    def insert_result(self, result: dict, done: Inserted, op: Op) -> None:
        """Add this engine's entries to an ``insert``'s result (a freed tail, a priority)."""

    def tier_measures(self, tree: TreeSnapshot, nodes: list[NodeSnapshot]) -> dict[str, int]:
        """A challenge's measures of a second tier (lessons/challenges/goals.py), on the tree
        ``tree`` and its ``nodes`` (the root left out): 0 each for an engine with one tier."""
        return dict.fromkeys(TIER_MEASURES, 0)

    # A comparison's column (sides.py) asks these before any session opens: class methods.

    @classmethod
    def column_name(cls, spec: EngineSpec, settings: Mapping) -> str:
        """A column's short id: the engine's name (the 2024 engine: its matcher's)."""
        return spec.name

    @classmethod
    def column_title(cls, spec: EngineSpec, settings: Mapping) -> str:
        """A column's title: ``2026 engine, page 4, lru``."""
        return ", ".join((f"{spec.name} engine", *spec.words(settings)))

    @classmethod
    def column_engine_line(cls, op: Op, spec: EngineSpec) -> Op:
        """What a column does with an ``engine X`` line when the columns run different
        engines: it keeps its engine and opens it afresh (empty), as a plain run would."""
        return replace(op, mode=spec.name)


def ops_class(spec: EngineSpec) -> type[EngineOps]:
    """The engine's own ``EngineOps`` class (``OPS`` of its script module), or the shared one."""
    part = spec.part("script")
    return EngineOps if part is None else part.OPS


def engine_ops(spec: EngineSpec, session: SessionShape) -> EngineOps:
    """The engine's own ``EngineOps`` (the class ``OPS`` of its script module), on ``session``."""
    return ops_class(spec)(session)


def describe(frame: Frame) -> str | None:
    """The engine's own line for a step (its script module's ``describe``), or None."""
    return _narration(frame, "describe")


def explain(frame: Frame) -> str | None:
    """The engine's own 'why' for a step, or None: narrate.py's words then serve."""
    return _narration(frame, "explain")


def _narration(frame: Frame, which: str) -> str | None:
    part = engine_spec(frame.tree.engine).part("script")
    words = getattr(part, which, None)
    return None if words is None else words(frame)


def _path(node) -> list:
    nodes = []
    while node.parent is not None:
        nodes.append(node)
        node = node.parent
    return nodes[::-1]


def _first_short(node) -> int:
    """Position of the first token whose slot is missing on the way to ``node``: from there
    on every returned slot belongs to a later token."""
    position = 0
    for n in _path(node):
        if len(n.value) < len(n.key):
            return position + len(n.value)
        position += len(n.key)
    return position

