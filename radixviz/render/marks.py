"""What the views share: how an edge reads, how slots read, and which mark a node carries.

Every mark has a symbol as well as a colour so the views read in monochrome too.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len

from radixviz.cache import escape_token
from radixviz.script.narrate import slot_runs

ELLIPSIS = "…"


@dataclass(frozen=True)
class Mark:
    name: str        # what a legend calls it
    symbol: str      # one cell wide
    style: str       # Rich style
    color: str       # Graphviz border colour
    fill: str = "white"  # Graphviz fill: a pale tint of the border colour


# Order matters: a node shows every mark it has, in this order, and the first one colours it.
CURRENT = Mark("current step", "▶", "bold reverse", "#1f6feb", "#ddf4ff")
WRONG = Mark("wrongly matched (pre-#7)", "✗", "bold red", "#d1242f", "#ffebe9")
SPLIT = Mark("just split", "✂", "bold yellow", "#bf8700", "#fff8c5")
PATH = Mark("matched", "✓", "bold green", "#1a7f37", "#dafbe1")
CREATED = Mark("new", "+", "cyan", "#0969da", "#ddf4ff")
LOCKED = Mark("locked (ref > 0)", "●", "magenta", "#8250df", "#fbefff")
EVICTED = Mark("evicted", "†", "dim strike", "#8c959f")
ALL_MARKS = (CURRENT, WRONG, SPLIT, PATH, CREATED, LOCKED, EVICTED)


def edge_text(key, max_cells: int = 24) -> str:
    """An edge quoted and escaped; longer than ``max_cells`` it keeps its head and tail."""
    parts = [escape_token(t) for t in key]
    body = "".join(parts)
    if cell_len(body) + 2 <= max_cells or max_cells < 8:
        return f"'{body}'"
    budget = max_cells - 3  # two quotes and the ellipsis
    tail_budget = max(1, budget // 3)
    head, tail, used = [], [], 0
    for part in reversed(parts):
        if used + cell_len(part) > tail_budget:
            break
        tail.append(part)
        used += cell_len(part)
    for part in parts:
        if used + cell_len(part) > budget:
            break
        head.append(part)
        used += cell_len(part)
    return f"'{''.join(head)}{ELLIPSIS}{''.join(reversed(tail))}'"


def compact_ranges(slots, max_runs: int = 3) -> str:
    """``0–5,22–26``; a badly fragmented value shows its first runs and how many more."""
    runs = slot_runs(slots)
    if not runs:
        return "-"
    shown = [str(a) if a == b else f"{a}–{b}" for a, b in runs[:max_runs]]
    if len(runs) > max_runs:
        shown.append(f"{ELLIPSIS}+{len(runs) - max_runs}")
    return ",".join(shown)


class NodeMarks:
    """Marks resolved once per render: which marks each node id carries."""

    def __init__(self, marks=None):
        self.current = set(getattr(marks, "current", ()) or ())
        self.path = set(getattr(marks, "path", ()) or ())
        self.split = set(getattr(marks, "split", ()) or ())
        self.wrong = set(getattr(marks, "wrong", ()) or ())
        self.created = set(getattr(marks, "created", ()) or ())
        self.evicted = tuple(getattr(marks, "evicted", ()) or ())

    def of(self, node) -> list[Mark]:
        found = []
        if node.id in self.current:
            found.append(CURRENT)
        if node.id in self.wrong:
            found.append(WRONG)
        if node.id in self.split:
            found.append(SPLIT)
        # a wrongly matched node is on the buggy path too; showing both would read as "fine"
        if node.id in self.path and node.id not in self.wrong:
            found.append(PATH)
        if node.id in self.created:
            found.append(CREATED)
        if node.key and node.ref > 0:
            found.append(LOCKED)
        return found

    def interesting(self) -> set:
        """Ids a folded view must keep visible."""
        return self.current | self.path | self.split | self.wrong | self.created
