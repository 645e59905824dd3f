"""What one column of a comparison runs: an engine and its settings, as a person names it.

A side is a session configuration: the 2024 engine with the fixed (#7) or the buggy
(pre-#7) matcher, or the 2026 engine with a page size and an eviction policy. The #7
compare puts two 2024 sides next to each other; the compare across time puts a 2024 side
next to a 2026 side. No UI and no torch here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass, replace

from radixviz.cache.engines import engine_spec, engine_with, op_owners, option_ops, option_owners
from radixviz.cache.options import EVICTION, PAGE

from .ops import ops_class

if TYPE_CHECKING:
    from radixviz.cache import TreeSnapshot
    from .parser import Op

# the script lines that pick a cache rather than use one: each column keeps its own (see
# ``SideConfig.own_op``)
SETTING_OPS = frozenset({"engine", "page-size", "eviction", "matcher", "insert-slots"})


@dataclass(frozen=True)
class SideConfig:
    engine: str = "2024"
    buggy: bool = False            # the 2024 matcher before #7
    page_size: int = PAGE.default             # the 2026 engine's (defaults: cache/options.py)
    eviction_policy: str = EVICTION.default
    # a later engine's own options, (name, value) pairs: the unified tree's components, window ...
    more: tuple[tuple[str, object], ...] = ()

    @property
    def spec(self):
        """The engine's registry entry (radixviz.cache.engines): what it has."""
        return engine_spec(self.engine)

    @property
    def settings(self) -> dict:
        return {"buggy": self.buggy, "page_size": self.page_size, "eviction_policy": self.eviction_policy,
                **dict(self.more)}

    @property
    def name(self) -> str:
        """A short id: fixed or buggy (an engine with the #7 switch), else the engine's name."""
        return ops_class(self.spec).column_name(self.spec, self.settings)

    @property
    def title(self) -> str:
        """The column's title: which engine, matcher, page size and policy."""
        return engine_title(self.engine, self.settings)

    def session_options(self) -> dict:
        return {"engine": self.engine, **self.settings}

    def own_op(self, op: Op):
        """What this column does with ``op`` when the columns run different engines:
        ``(op to apply, None)``, or ``(None, why)`` to record it without applying it.

        - ``engine X``: each column keeps its engine; the line empties both caches, as a
          plain run's engine line does (a column with the #7 switch resets, so its matcher
          stays; another opens its own engine afresh).
        - ``page-size N`` sets the pages of a column with pages (its cache starts empty, as
          in a plain run); another column is emptied too, so the two stay comparable.
        - ``eviction NAME`` sets a column's policy; a column without policies skips it.
        - ``matcher`` and ``insert-slots`` are the first release's switches: a column without
          them skips them.
        - ``insert "..." priority N``: a column without priorities inserts the key without one.
        """
        spec = self.spec
        if op.name == "engine":
            return ops_class(spec).column_engine_line(op, spec), None
        # the setting operations are an engine's own (its registry line lists them): a
        # column whose engine has none skips the line, or is emptied (page-size)
        owners = op_owners(op.name)   # () for an operation every engine takes
        if owners and spec.name not in owners:
            if op.name == "page-size":
                return replace(op, name="reset", count=None), None
            if op.name == "eviction":
                return None, f"the {self.engine} engine evicts least recently used first"
            if op.name in ("matcher", "insert-slots"):
                return None, f"{op.name} is a switch of the {' or '.join(owners)} engine"
        option = option_ops().get(op.name)   # an option's own operation (``window 4``)
        if option is not None and not owners and not spec.takes(option.name):
            return None, f"{op.name} is an option of the {' or '.join(option_owners(option.name))} engine"
        if op.name == "insert" and op.priority is not None and not ops_class(spec).takes_priority:
            return replace(op, priority=None), None
        return op, None


FIXED = SideConfig("2024", buggy=False)
BUGGY = SideConfig("2024", buggy=True)


def engine_title(engine: str, settings) -> str:
    """``2024 engine, fixed matcher (#7)`` or ``2026 engine, page 4, lru``."""
    spec = engine_spec(engine)
    return ops_class(spec).column_title(spec, settings)


def engine_sides(buggy: bool = False, page_size: int = PAGE.default, eviction_policy: str = EVICTION.default,
                 engines: tuple = ("2024", "2026")) -> tuple:
    """The two columns of a comparison across time: 2024 (with that matcher), then 2026."""
    return tuple(SideConfig(name, buggy=buggy, page_size=page_size, eviction_policy=eviction_policy)
                 for name in engines)


def later_sides(engine: str, page_size: int = PAGE.default, eviction_policy: str = EVICTION.default,
                more: tuple[tuple[str, object], ...] = ()) -> tuple:
    """A later engine (the unified tree) beside today's cache, both with ``page_size`` and
    ``eviction_policy``; ``more``: the later engine's own options."""
    today = engine_with("pages", without="host_tier")
    return (SideConfig(today, page_size=page_size, eviction_policy=eviction_policy),
            SideConfig(engine, page_size=page_size, eviction_policy=eviction_policy, more=tuple(more)))


def tree_title(tree: TreeSnapshot) -> str:
    """A column's title from the tree it shows: the settings in force there (a script's
    ``page-size`` or ``eviction`` line may have changed them since the start)."""
    return engine_title(tree.engine, {"buggy": tree.buggy_match, **tree.settings})
