"""What the views share: how an edge reads, how slots read, and which mark a node carries.

Every mark has a symbol as well as a colour so the views read in monochrome too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

from rich.cells import cell_len

from radixviz.cache.text import ELLIPSIS, key_text, slot_ranges  # noqa: F401 (ELLIPSIS: tree.py)

from .views import load_views, mark_words, removed_word

if TYPE_CHECKING:
    from collections.abc import Iterable
    from ..cache.snapshot import NodeSnapshot, TreeSnapshot
    from ..script.frames import Marks


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
# today's nodes carry ``lock_ref`` and the views print it as "lock N", not "ref N"
LOCKED_2026 = "locked (lock > 0)"
# with a host tier a node may be evicted (off the device) and stay: a removed one is deleted
DELETED_HOST_TIER = "deleted from both tiers"


def mark_name(mark: Mark, tree: TreeSnapshot | None) -> str:
    """What a legend calls ``mark`` on ``tree`` (a snapshot, or None): as its type says it
    (render/views/: today's locks are "lock > 0", the host tier's removals "deleted")."""
    if tree is None:
        return mark.name
    load_views(tree)
    return mark_words(tree).get(mark.name, mark.name)


def ghost_word(tree: TreeSnapshot | None) -> str:
    """How a view names a leaf the step removed from the tree: with a host tier "evicted"
    means "no device copy", so a node gone from both tiers is "deleted"."""
    if tree is None:
        return EVICTED.name
    load_views(tree)
    return removed_word(tree)


def partial_legend(taken: int, total: int) -> str:
    """The legend of an edge a match took only the start of, with that edge's numbers."""
    return f"│ the match took only the tokens before it ({taken}/{total}: {taken} of {total})"


def edge_text(key: tuple, max_cells: int = 24) -> str:
    """An edge quoted and escaped, fitting ``max_cells`` terminal cells (head and tail kept)."""
    return key_text(key, max_cells, width=cell_len)


def split_edge_text(key: tuple, taken: int, max_cells: int = 24) -> tuple[str, str, str]:
    """``("'Hello_", "L.A.!'", "6 of 11 matched")``: an edge cut where a match stopped taking
    tokens, each half shortened to its share of ``max_cells``."""
    head = edge_text(key[:taken], max(8, max_cells * taken // max(1, len(key))))[:-1]
    tail = edge_text(key[taken:], max(8, max_cells - cell_len(head)))[1:]
    return head, tail, f"{taken} of {len(key)} matched"


def compact_ranges(slots: Iterable[int], max_runs: int = 3) -> str:
    """``0–5,22–26``; a badly fragmented value shows its first runs and how many more."""
    return slot_ranges(slots, compact=True, max_runs=max_runs)


class NodeMarks:
    """Marks resolved once per render: which marks each node id carries."""

    def __init__(self, marks: Marks | None = None) -> None:
        self.current = set(getattr(marks, "current", ()) or ())
        self.path = set(getattr(marks, "path", ()) or ())
        self.split = set(getattr(marks, "split", ()) or ())
        self.wrong = set(getattr(marks, "wrong", ()) or ())
        self.created = set(getattr(marks, "created", ()) or ())
        self.evicted = tuple(getattr(marks, "evicted", ()) or ())
        self.partial = dict(getattr(marks, "partial", ()) or ())

    def taken(self, node: NodeSnapshot) -> int | None:
        """How many of the node's tokens a match really took, when it took only the start of
        the edge (the pre-#7 walk goes on below such an edge); None otherwise."""
        taken = self.partial.get(node.id)
        return taken if taken is not None and taken < len(node.key) else None

    def of(self, node: NodeSnapshot) -> list[Mark]:
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
