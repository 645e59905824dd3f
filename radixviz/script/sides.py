"""What one column of a comparison runs: an engine and its settings, as a person names it.

A side is a session configuration: the 2024 engine with the fixed (#7) or the buggy
(pre-#7) matcher, or the 2026 engine with a page size and an eviction policy. The #7
compare puts two 2024 sides next to each other; the compare across time puts a 2024 side
next to a 2026 side. No UI and no torch here.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

# the script lines that pick a cache rather than use one: each column keeps its own (see
# ``SideConfig.own_op``)
SETTING_OPS = frozenset({"engine", "page-size", "eviction", "matcher", "insert-slots"})


@dataclass(frozen=True)
class SideConfig:
    engine: str = "2024"
    buggy: bool = False            # the 2024 matcher before #7
    page_size: int = 1             # the 2026 engine's
    eviction_policy: str = "lru"   # the 2026 engine's

    @property
    def name(self) -> str:
        """A short id: fixed, buggy (2024) or 2026."""
        if self.engine == "2026":
            return "2026"
        return "buggy" if self.buggy else "fixed"

    @property
    def title(self) -> str:
        """The column's title: which engine, matcher, page size and policy."""
        if self.engine == "2026":
            return f"2026 engine, page {self.page_size}, {self.eviction_policy}"
        return "2024 engine, BUGGY matcher (pre-#7)" if self.buggy else "2024 engine, fixed matcher (#7)"

    def session_options(self) -> dict:
        return {"buggy": self.buggy, "engine": self.engine, "page_size": self.page_size,
                "eviction_policy": self.eviction_policy}

    def own_op(self, op):
        """What this column does with ``op`` when the columns run different engines:
        ``(op to apply, None)``, or ``(None, why)`` to record it without applying it.

        - ``engine X``: each column keeps its engine; the line empties both caches, as a
          plain run's engine line does (a 2026 column applies ``engine 2026``, the other a reset).
        - ``page-size N`` sets the 2026 column's pages (its cache starts empty, as in a plain
          run); the 2024 column is emptied too, so the two stay comparable.
        - ``eviction NAME`` sets the 2026 column's policy; the 2024 column (LRU) skips it.
        - ``matcher`` and ``insert-slots`` are the 2024 engine's switches; the 2026 column skips them.
        - ``insert "..." priority N``: the 2024 column inserts the same key without a priority.
        """
        modern = self.engine == "2026"
        if op.name == "engine":
            return (replace(op, mode="2026") if modern else replace(op, name="reset", mode=None)), None
        if op.name == "page-size":
            return (op if modern else replace(op, name="reset", count=None)), None
        if op.name == "eviction" and not modern:
            return None, "the 2024 engine evicts least recently used first"
        if op.name in ("matcher", "insert-slots") and modern:
            return None, f"{op.name} is a switch of the 2024 engine"
        if op.name == "insert" and op.priority is not None and not modern:
            return replace(op, priority=None), None
        return op, None


FIXED = SideConfig("2024", buggy=False)
BUGGY = SideConfig("2024", buggy=True)


def engine_sides(buggy: bool = False, page_size: int = 1, eviction_policy: str = "lru") -> tuple:
    """The two columns of a comparison across time: 2024 (with that matcher), then 2026."""
    return SideConfig("2024", buggy=buggy), SideConfig("2026", page_size=page_size,
                                                      eviction_policy=eviction_policy)


def tree_title(tree) -> str:
    """A column's title from the tree it shows: the settings in force there (a script's
    ``page-size`` or ``eviction`` line may have changed them since the start)."""
    if getattr(tree, "engine", "2024") == "2026":
        return SideConfig("2026", page_size=tree.page_size, eviction_policy=tree.eviction_policy).title
    return SideConfig("2024", buggy=tree.buggy_match).title
