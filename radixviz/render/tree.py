"""The radix tree as a Rich renderable: one line per node, marks as symbols and colours.

Large trees stay readable: long edges keep their head and tail, and levels deeper than
``max_depth`` or siblings beyond ``max_children`` fold into a ``… N more`` line. Nodes that
carry a mark (the matched path, a split, the current step) and the way down to them are never
folded away.

With namespaces (the 2026 engine's extra keys) the root's children are grouped under one
labelled line per namespace; page hashes, once computed, end each node's line in short form.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from radixviz.cache.text import escape_token

from .marks import (ALL_MARKS, EVICTED, ELLIPSIS, NodeMarks, edge_text, ghost_word, mark_name,
                    partial_legend, split_edge_text)
from .subtree import subtree_size
from .tree_rows import TreeRows, namespace_groups, unreferenced_tokens  # noqa: F401 - views import the last two here
from .views import (DETAIL_STYLE, extra_lines, header_parts, load_views, node_details,
                    page_size_shown)
from .views import node_counts as node_counts  # graphviz and the oracles import it here

if TYPE_CHECKING:
    from collections.abc import Hashable
    from ..cache.snapshot import NodeSnapshot, TreeSnapshot
    from ..script.frames import Marks
    from .marks import Mark

GUIDE_STYLE = "dim"
MAX_GUIDES = 24   # levels of guides drawn before a line's prefix says how many are left out
_NODE_LINES: OrderedDict = OrderedDict()   # see TreeView.node_line
NAMESPACE_STYLE = "bold magenta"


class TreeView:
    """Rich renderable for a ``TreeSnapshot`` and the ``Marks`` of one frame.

    Its lines are a ``TreeRows`` sequence (render/tree_rows.py): a view showing a few dozen
    rows builds only those; printing it builds them all."""

    def __init__(self, tree: TreeSnapshot, marks: Marks | None = None, *, max_edge: int = 24, max_depth: int = 12,
                 max_children: int = 16, legend: bool = False) -> None:
        self.tree, self.marks = tree, marks
        self.max_edge, self.max_depth, self.max_children = max_edge, max_depth, max_children
        self.legend = legend
        load_views(tree)   # the engine's own views (render/views/), once, by its registry line
        self.node_marks = NodeMarks(marks)
        self._rows: TreeRows | None = None

    # ----------------------------------------------------------------- Rich protocol

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.rows

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((line.cell_len for line in self.rows), default=1)
        return Measurement(min(widest, 20), widest).clamp(max_width=options.max_width)

    # ------------------------------------------------------------------- reading

    @property
    def rows(self) -> TreeRows:
        """The lines as a sequence that builds each one when it is first read."""
        if self._rows is None:
            self._rows = TreeRows(self)
        return self._rows

    def lines(self) -> list[Text]:
        """Every line (all of them built)."""
        return list(self.rows)

    def line_of(self, node_id: int) -> int | None:
        """The index in ``lines()`` of the node's line, or None if the node is folded away."""
        return self.rows.line_of(node_id)

    # ------------------------------------------------------- the lines, one by one

    def header_line(self) -> Text:
        tree = self.tree
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append("root", style="bold")
        header.append(f"  {tree.total_size} tokens · {tree.evictable_size} evictable", style=DETAIL_STYLE)
        for text, style in header_parts(tree):   # what this tree's type says there
            header.append(text, style=style)
        return header

    def node_line(self, node: NodeSnapshot, node_marks: list[Mark], prefix: str, last: bool) -> Text:
        """The node's line. Node snapshots are immutable and a step shares the ones it did
        not change, so the line of such a node, marked and placed as before, is the Text
        built before (a view that shows it again repaints nothing). Read-only: copy to change."""
        taken = self.node_marks.taken(node)
        key = (id(node), tuple(node_marks), prefix, last, taken, self.tree.engine,
               getattr(self.tree, "page_size", 1), self.max_edge)
        known = _NODE_LINES.get(key)
        if known is not None and known[0] is node:   # the entry keeps the node: the id is its own
            _NODE_LINES.move_to_end(key)
            return known[1]
        line = self._node_line(node, node_marks, prefix, last, taken)
        _NODE_LINES[key] = (node, line)
        if len(_NODE_LINES) > 8192:
            _NODE_LINES.popitem(last=False)
        return line

    def _node_line(self, node: NodeSnapshot, node_marks: list[Mark], prefix: str, last: bool,
                   taken: int | None) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(guides(prefix) + ("└── " if last else "├── "), style=GUIDE_STYLE)
        style = " ".join(m.style for m in node_marks)
        if node_marks:
            line.append("".join(m.symbol for m in node_marks) + " ", style=style)
        # taken: only the pre-#7 matcher takes part of an edge
        page_size = page_size_shown(self.tree)
        if page_size is not None:
            line.append(paged_text(node.key, page_size, self.max_edge), style=style)
        elif taken is None:
            line.append(edge_text(node.key, self.max_edge), style=style)
        else:
            # only the tokens really matched carry the mark; the rest of the edge is plain
            head, tail, _note = split_edge_text(node.key, taken, self.max_edge)
            line.append(head, style=style + " underline")
            line.append("│", style="bold")
            line.append(tail, style=DETAIL_STYLE)
            line.append(f" {taken}/{len(node.key)}", style=style)
        for text, part_style in node_details(node, "  "):   # by the node's type: slots, tiers, hashes
            line.append(text, style=part_style)
        return line

    def namespace_line(self, group, prefix: str, last: bool) -> Text:
        """The labelled line of one namespace under the root (its subtrees are drawn below it)."""
        label = Text(no_wrap=True, overflow="ellipsis")
        label.append(guides(prefix) + ("└── " if last else "├── "), style=GUIDE_STYLE)
        label.append(namespace_label(group.name), style=NAMESPACE_STYLE)
        label.append(f"  {_count(group.subtree_tokens, 'token')}", style=DETAIL_STYLE)
        return label

    def deep_fold(self, hidden: list, kept: bool):
        """Below ``max_depth`` only the way down to a marked node is drawn: the line (given
        its prefix) counting the rest."""
        def line(prefix: str) -> Text:
            count = sum(subtree_size(c) for c in hidden)
            tokens = sum(c.subtree_tokens for c in hidden)
            return _fold(prefix, f"{_count(count, 'more node')} below ({_count(tokens, 'token')})",
                         guide="└── " if kept else "")
        return line

    def wide_fold(self, hidden: list):
        """Siblings beyond ``max_children``: the line (given its prefix) counting them."""
        def line(prefix: str) -> Text:
            tokens = sum(c.subtree_tokens for c in hidden)
            what = f"{len(hidden)} more {'child' if len(hidden) == 1 else 'children'} ({_count(tokens, 'token')})"
            return _fold(prefix, what, guide="└── ")
        return line

    def evicted_line(self, key: tuple) -> Text:
        ghost = Text(no_wrap=True, overflow="ellipsis")
        ghost.append(f"{EVICTED.symbol} {ghost_word(self.tree)} ", style=EVICTED.style)
        ghost.append(edge_text(key, self.max_edge), style=EVICTED.style)
        return ghost

    def tier_lines(self) -> list[Text]:
        """The lines the tree's type adds (the host tier's: its tier tags, when there is a node)."""
        return extra_lines(self.tree)

    def legend_lines(self, used: set, cut: tuple | None) -> list[Text]:
        """The legend of the marks ``used``; then, for an edge a match took only the start of,
        ``cut`` = (tokens taken, edge length), a line with those numbers."""
        lines = [legend_line(used, self.tree)]
        if cut is not None:   # the numbers of the cut edge drawn above, not an example's
            lines.append(Text(partial_legend(*cut), style=DETAIL_STYLE, no_wrap=True, overflow="ellipsis"))
        return lines


def paged_text(key: tuple, page_size: int, max_edge: int) -> str:
    """An edge in page-sized groups, ``'abcd|efgh'``; a long edge keeps its first two pages
    and its last one."""
    if page_size <= 1:
        return edge_text(key, max_edge)
    pages = ["".join(escape_token(t) for t in key[i:i + page_size]) for i in range(0, len(key), page_size)]
    if len(pages) > 4:
        pages = pages[:2] + [ELLIPSIS] + pages[-1:]
    return "'" + "|".join(pages) + "'"


def guides(prefix: str, most: int = MAX_GUIDES) -> str:
    """``prefix`` (four columns a level) as drawn: past ``most`` levels only the last ones,
    after the number of levels left out. A line thousands of levels down would otherwise
    start with thousands of columns of guides, and build and crop them on every draw."""
    levels = len(prefix) // 4
    if levels <= most:
        return prefix
    shown = most - 4   # the marker takes the room of four levels (16 columns: up to 9,999,999)
    return f"{ELLIPSIS}{levels - shown:,} levels{ELLIPSIS}".rjust(16) + prefix[-4 * shown:]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _fold(prefix: str, what: str, guide: str = "") -> Text:
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(guides(prefix) + guide, style=GUIDE_STYLE)
    line.append(f"{ELLIPSIS} {what}", style="italic dim")
    return line


def legend_line(used, tree: TreeSnapshot | None = None) -> Text:
    """``▶ current step  ✓ matched ...`` for the marks present, in their fixed order, named
    as the engine of ``tree`` (a snapshot) names them."""
    line = Text(no_wrap=True, overflow="ellipsis")
    for mark in ALL_MARKS:
        if mark in used:
            if line:
                line.append("  ")
            line.append(f"{mark.symbol} {mark_name(mark, tree)}", style=mark.style)
    return line


def namespace_label(name: Hashable) -> str:
    """``⟪ns lora-a⟫``, or ``⟪no namespace⟫`` for keys without an extra key."""
    return "⟪no namespace⟫" if name is None else f"⟪ns {name}⟫"
