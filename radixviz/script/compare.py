"""The same operations run twice, one session per column, step by step side by side.

Two comparisons share this: the #7 one (the 2024 engine with the fixed and with the buggy
matcher, ``compare_ops``) and the one across time (the 2024 engine beside SGLang's cache of
2026, ``compare_engines``). No UI: ``run --compare``, ``export --compare`` and the app's
compare view read this.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

from radixviz.cache.options import EVICTION, PAGE
from radixviz.cache.snapshot import fold_up

from .parser import ScriptError
from .session import Session
from .sides import BUGGY, FIXED, SETTING_OPS, SideConfig, engine_sides, later_sides, tree_title

if TYPE_CHECKING:
    from collections.abc import Iterable
    from radixviz.cache import TreeSnapshot
    from radixviz.script.parser import Op

# what a node id or a lock's node says depends on how many splits came before: not a
# difference in what the operation did
_IDS = ("last_node", "node", "disagreement")
# what only one engine reports (2026: the insert's priority) is shown, not compared
_ENGINE_ONLY = ("priority", "skipped", "engine", "page_size", "eviction_policy", "mode")


@dataclass
class SideBySide:
    ops: list
    left: Session
    right: Session
    diverged: int | None = None        # index of the first operation whose outcome differs
    error: ScriptError | None = None   # the operation refused (by either side) that stopped both
    configs: tuple = (FIXED, BUGGY)    # what each column runs (SideConfig)

    @property
    def fixed(self) -> Session:
        """The #7 compare's names for its columns."""
        return self.left

    @property
    def buggy(self) -> Session:
        return self.right

    @property
    def sessions(self) -> tuple:
        return self.left, self.right

    @property
    def across_engines(self) -> bool:
        return self.configs[0].engine != self.configs[1].engine

    def titles(self, index: int | None = None) -> tuple:
        """Each column's title after operation ``index`` (the last by default): which engine,
        matcher, page size and policy it runs there."""
        if not self.across_engines:
            return tuple(c.title for c in self.configs)
        return tuple(tree_title(_frame(s, index).tree) for s in self.sessions)

    @property
    def noun(self) -> str:
        """What the columns differ in: ``engines`` or ``matchers``."""
        return "engines" if self.across_engines else "matchers"

    @property
    def count(self) -> int:
        return min(len(self.left.records), len(self.right.records))

    @property
    def same_slots(self) -> bool:
        """Whether both columns number their slots alike: pools of one kind. The unified
        engine's pool is SGLang's allocator (slot 0 never, a freed slot to the back of the
        list), the others' take the lowest free slots: across those, slots count, not their
        numbers."""
        return type(self.left.pool) is type(self.right.pool)

    def differs(self, index: int) -> bool:
        """Whether operation ``index`` returned something else, or left another tree."""
        a, b = self.left.records[index], self.right.records[index]
        numbers = self.same_slots
        if self.across_engines:
            if self.ops[index].name not in SETTING_OPS and _outcomes_differ(a.result, b.result, numbers):
                return True
        elif _outcome(a.result) != _outcome(b.result):
            return True
        ordered = not self.across_engines   # the engines keep children in another order
        shapes: dict = {}
        return (_shape(self.left.frames[a.last_frame].tree, shapes, ordered, numbers)
                != _shape(self.right.frames[b.last_frame].tree, shapes, ordered, numbers))


def compare_ops(ops: Iterable[Op], pool_size: int, device: str = "auto") -> SideBySide:
    """Apply ``ops`` to a session starting with the fixed matcher and one starting with the
    buggy one; stop both at the first operation either refuses. A ``matcher`` line in the
    ops switches its session where it stands, as in a plain run."""
    return compare_sides(ops, FIXED, BUGGY, pool_size, device)


def compare_engines(ops: Iterable[Op], pool_size: int, device: str = "auto", *, buggy: bool = False,
                    page_size: int = PAGE.default,
                    eviction_policy: str = EVICTION.default, later: str | None = None,
                    more: tuple[tuple[str, object], ...] = ()) -> SideBySide:
    """The compare across time: the 2024 engine (with the matcher ``buggy`` names) beside
    the 2026 engine with ``page_size`` and ``eviction_policy``; or, given a ``later`` engine
    (with ``more`` of its own options), the 2026 engine beside it. What a line that picks a
    cache does in each column is ``SideConfig.own_op``'s rule."""
    if later is not None:
        left, right = later_sides(later, page_size, eviction_policy, more)
    else:
        left, right = engine_sides(buggy, page_size, eviction_policy)
    return compare_sides(ops, left, right, pool_size, device)


def compare_sides(ops: Iterable[Op], left: SideConfig, right: SideConfig, pool_size: int,
                  device: str = "auto") -> SideBySide:
    """Apply ``ops`` to one session per column; stop both at the first operation either refuses."""
    side = SideBySide(list(ops), Session(pool_size, device=device, **left.session_options()),
                      Session(pool_size, device=device, **right.session_options()),
                      configs=(left, right))
    for index, op in enumerate(side.ops):
        plan = [(session, *_own(config, op, side.across_engines))
                for session, config in zip(side.sessions, side.configs)]
        try:
            for session, own, _ in plan:
                if own is not None:
                    session.precheck(own)
        except ScriptError as exc:
            side.error = exc
            break
        for session, own, why in plan:
            if own is None:
                session.skip(op, why)
            else:
                session.apply(own)
        if side.diverged is None and side.differs(index):
            side.diverged = index
    return side


def _frame(session: Session, index):
    """The frame after operation ``index`` (the last one by default, or the start)."""
    if index is None:
        return session.frames[-1] if session.frames else session.live_frame()
    return session.frames[session.records[index].last_frame]


def _own(config: SideConfig, op, across: bool) -> tuple:
    """The operation a column applies (None: skipped) and why it skips it."""
    return config.own_op(op) if across else (op, None)


def _outcome(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in _IDS}


def _outcomes_differ(a: dict, b: dict, numbers: bool = True) -> bool:
    """Whether what both engines report about an operation differs (``numbers=False``: a list
    of slots by its length only)."""
    shared = (a.keys() & b.keys()) - set(_IDS) - set(_ENGINE_ONLY)
    return any(_slots(a[k], numbers) != _slots(b[k], numbers) for k in shared)


def _slots(value, numbers: bool):
    return len(value) if not numbers and isinstance(value, list) else value


def _shape(tree: TreeSnapshot, shapes: dict, ordered: bool = True, numbers: bool = True) -> int:
    """The tree without ids or times (edges, slots and reference counts: 2024's ``ref``,
    2026's ``lock_ref``) as a number: two trees numbered with the same ``shapes`` get the
    same number exactly when they have the same shape. ``ordered=False`` ignores the order
    of children, ``numbers=False`` the slots' numbers (their count stays: the edge's length).
    Numbers, not nested tuples: a tuple compared with one nested thousands deep recurses
    past Python's limit."""
    def number(node, kids: list) -> int:
        slots = tuple(node.value) if numbers else len(node.value)
        return shapes.setdefault((node.key, slots, node.ref, tuple(kids if ordered else sorted(kids))), len(shapes))
    return fold_up(tree.root, number)
