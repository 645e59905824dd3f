"""The tree view as it was built before rows were made lazily: every line at once, in one
walk. The oracle of test_render_tree_rows (radixviz.render.tree must give the same lines).

The radix tree as a Rich renderable: one line per node, marks as symbols and colours.

Large trees stay readable: long edges keep their head and tail, and levels deeper than
``max_depth`` or siblings beyond ``max_children`` fold into a ``… N more`` line. Nodes that
carry a mark (the matched path, a split, the current step) and the way down to them are never
folded away.
"""
from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from radixviz.cache.engines import engine_spec
from radixviz.cache.text import escape_token

from radixviz.render.marks import (ALL_MARKS, EVICTED, ELLIPSIS, NodeMarks, compact_ranges, edge_text, mark_name,
                    partial_legend, split_edge_text)

GUIDE_STYLE = "dim"
DETAIL_STYLE = "dim"


class EagerTreeView:
    """Rich renderable for a ``TreeSnapshot`` and the ``Marks`` of one frame."""

    def __init__(self, tree, marks=None, *, max_edge: int = 24, max_depth: int = 12,
                 max_children: int = 16, legend: bool = False):
        self.tree, self.marks = tree, marks
        self.max_edge, self.max_depth, self.max_children = max_edge, max_depth, max_children
        self.legend = legend
        self._lines: list[Text] | None = None
        self._line_of: dict[int, int] = {}   # node id -> index of its line, once built

    # ----------------------------------------------------------------- Rich protocol

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.lines()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((line.cell_len for line in self.lines()), default=1)
        return Measurement(min(widest, 20), widest).clamp(max_width=options.max_width)

    # ------------------------------------------------------------------- building

    def lines(self) -> list[Text]:
        """The rendered lines (built once)."""
        if self._lines is None:
            self._lines = self._build()
        return self._lines

    def line_of(self, node_id: int) -> int | None:
        """The index in ``lines()`` of the node's line, or None if the node is folded away."""
        self.lines()
        return self._line_of.get(node_id)

    def _build(self) -> list[Text]:
        marks = self.node_marks = NodeMarks(self.marks)
        keep = self._ancestors_of(marks.interesting())
        tree = self.tree
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append("root", style="bold")
        spec = engine_spec(tree.engine)   # what this engine has decides what the header says
        header.append(f"  {tree.total_size} tokens · {tree.evictable_size} evictable", style=DETAIL_STYLE)
        if spec.node_stats:
            header.append(f" · {tree.protected_size} protected", style=DETAIL_STYLE)
        truth = unreferenced_tokens(tree)
        if spec.release_insert and getattr(tree, "short_values", False) and truth != tree.evictable_size:
            # the #4 drift (short values accepted): the counter no longer tells the truth
            header.append(f" ⚠≠{truth} unreferenced", style="bold red")
        if spec.matcher_switch:
            header.append(" · matcher ", style=DETAIL_STYLE)
            header.append("BUGGY (pre-#7)" if tree.buggy_match else "fixed",
                          style="bold red" if tree.buggy_match else DETAIL_STYLE)
        else:
            header.append(f" · {', '.join((tree.engine, *spec.words(tree.settings)))}", style=DETAIL_STYLE)
        lines = [header]
        used_marks: set = set()
        # an explicit stack: a chain of thousands of nodes must not hit the recursion limit
        stack: list = []
        self._push_children(stack, tree.root, keep, "", 1)
        while stack:
            item = stack.pop()
            if isinstance(item, Text):
                lines.append(item)
                continue
            node, prefix, last, depth = item
            node_marks = marks.of(node)
            used_marks.update(node_marks)
            self._line_of[node.id] = len(lines)
            lines.append(self._node_line(node, node_marks, prefix, last))
            child_prefix = prefix + ("    " if last else "│   ")
            if not node.children:
                continue
            if depth >= self.max_depth:
                self._push_deep(stack, node, keep, child_prefix, depth + 1)
            else:
                self._push_children(stack, node, keep, child_prefix, depth + 1)
        for _, key in marks.evicted:
            used_marks.add(EVICTED)
            ghost = Text(no_wrap=True, overflow="ellipsis")
            ghost.append(f"{EVICTED.symbol} evicted ", style=EVICTED.style)
            ghost.append(edge_text(key, self.max_edge), style=EVICTED.style)
            lines.append(ghost)
        if self.legend and used_marks:
            lines.append(legend_line(used_marks, tree))
            cut = next(((marks.taken(n), len(n.key)) for n in tree.root.walk()
                        if n.key and marks.taken(n) is not None), None)
            if cut is not None:   # the numbers of the cut edge drawn above, not an example's
                lines.append(Text(partial_legend(*cut), style=DETAIL_STYLE, no_wrap=True,
                                  overflow="ellipsis"))
        return lines

    def _node_line(self, node, node_marks, prefix: str, last: bool) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(prefix + ("└── " if last else "├── "), style=GUIDE_STYLE)
        style = " ".join(m.style for m in node_marks)
        if node_marks:
            line.append("".join(m.symbol for m in node_marks) + " ", style=style)
        spec = engine_spec(self.tree.engine)
        taken = self.node_marks.taken(node)   # only the pre-#7 matcher takes part of an edge
        if spec.pages:
            line.append(paged_text(node.key, self.tree.page_size, self.max_edge), style=style)
        elif taken is None:
            line.append(edge_text(node.key, self.max_edge), style=style)
        else:
            # only the tokens really matched carry the mark; the rest of the edge is plain
            head, tail, _note = split_edge_text(node.key, taken, self.max_edge)
            line.append(head, style=style + " underline")
            line.append("│", style="bold")
            line.append(tail, style=DETAIL_STYLE)
            line.append(f" {taken}/{len(node.key)}", style=style)
        line.append(f"  slots {compact_ranges(node.value)}  {node_counts(node, spec, '  ')}  "
                    f"t {node.last_access}", style=DETAIL_STYLE)
        if len(node.value) != len(node.key):
            line.append(f"  ⚠ {slot_mismatch(node)}", style="bold red")
        return line

    def _push_children(self, stack: list, node, keep: set, prefix: str, depth: int) -> None:
        shown = self._visible(node.children, keep)
        tail = self._fold_line(node.children, shown, prefix)
        if tail is not None:
            stack.append(tail)
        for i in range(len(shown) - 1, -1, -1):
            stack.append((shown[i], prefix, i == len(shown) - 1 and tail is None, depth))

    def _push_deep(self, stack: list, node, keep: set, prefix: str, depth: int) -> None:
        """Below ``max_depth`` only the way down to a marked node is drawn; the rest is counted."""
        kept = tuple(c for c in node.children if c.id in keep)
        hidden = [c for c in node.children if c.id not in keep]
        if hidden:
            count = sum(sum(1 for _ in c.walk()) for c in hidden)
            tokens = sum(c.subtree_tokens for c in hidden)
            stack.append(_fold(prefix, f"{_count(count, 'more node')} below ({_count(tokens, 'token')})",
                               guide="└── " if kept else ""))
        for i in range(len(kept) - 1, -1, -1):
            stack.append((kept[i], prefix, i == len(kept) - 1 and not hidden, depth))

    def _visible(self, children, keep: set) -> tuple:
        if len(children) <= self.max_children:
            return children
        chosen = {c.id for c in children if c.id in keep}
        for child in children:
            if len(chosen) >= self.max_children:
                break
            chosen.add(child.id)
        return tuple(c for c in children if c.id in chosen)

    def _fold_line(self, children, shown, prefix: str) -> Text | None:
        if len(shown) == len(children):
            return None
        ids = {c.id for c in shown}
        hidden = [c for c in children if c.id not in ids]
        tokens = sum(c.subtree_tokens for c in hidden)
        what = f"{len(hidden)} more {'child' if len(hidden) == 1 else 'children'} ({_count(tokens, 'token')})"
        return _fold(prefix, what, guide="└── ")

    def _ancestors_of(self, ids: set) -> set:
        nodes, keep = self.tree.nodes, set()
        for node_id in ids:
            if node_id in nodes:
                keep.update(self.tree.path_to(node_id))
        return keep


def node_counts(node, spec, sep: str) -> str:
    """A node's counts as the views show them: ``ref 2`` on the first release's nodes, ``lock 1
    {sep}hits 2{sep}prio 0`` on an engine whose nodes count hits and priorities."""
    if spec.node_stats:
        return sep.join((f"lock {node.ref}", f"hits {node.hit_count}", f"prio {node.priority}"))
    return f"ref {node.ref}"


def paged_text(key, page_size: int, max_edge: int) -> str:
    """An edge in page-sized groups, ``'abcd|efgh'``; a long edge keeps its first two pages
    and its last one."""
    if page_size <= 1:
        return edge_text(key, max_edge)
    pages = ["".join(escape_token(t) for t in key[i:i + page_size]) for i in range(0, len(key), page_size)]
    if len(pages) > 4:
        pages = pages[:2] + [ELLIPSIS] + pages[-1:]
    return "'" + "|".join(pages) + "'"
def unreferenced_tokens(tree) -> int:
    """What ``evictable_size`` should say: the tokens of every node nobody references."""
    return sum(len(n.key) for n in tree.root.walk() if n.key and n.ref == 0)


def slot_mismatch(node) -> str:
    return f"{len(node.value)} slots for {len(node.key)} tokens"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _fold(prefix: str, what: str, guide: str = "") -> Text:
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(prefix + guide, style=GUIDE_STYLE)
    line.append(f"{ELLIPSIS} {what}", style="italic dim")
    return line


def legend_line(used, tree=None) -> Text:
    """``▶ current step  ✓ matched ...`` for the marks present, in their fixed order, named
    as the engine of ``tree`` (a snapshot) names them."""
    line = Text(no_wrap=True, overflow="ellipsis")
    for mark in ALL_MARKS:
        if mark in used:
            if line:
                line.append("  ")
            line.append(f"{mark.symbol} {mark_name(mark, tree)}", style=mark.style)
    return line
