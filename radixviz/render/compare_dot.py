"""One Graphviz diagram with both columns' trees after the same operations.

The columns are the two matchers of the 2024 engine (#7) or, across time, the 2024 and the
2026 engine. Built with the ``graphviz`` package: each column's tree is a cluster, so
``dot`` draws them side by side in one picture with the marks of the Rich view (✗ wrongly
matched, the cut '…│…' of an edge the buggy walk took only in part, ✂ a split).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

import graphviz

from radixviz.files import atomic_write

from .graphviz import GraphvizError, format_for
from .marks import ALL_MARKS, CURRENT, PATH, WRONG, NodeMarks, compact_ranges, edge_text, split_edge_text
from .views import held_text, load_views

if TYPE_CHECKING:
    from ..cache.snapshot import NodeSnapshot, TreeSnapshot
    from ..script.compare import SideBySide
    from .marks import Mark

SIDES = (("fixed", "fixed matcher (#7)", "#1a7f37"), ("buggy", "BUGGY matcher (pre-#7)", "#d1242f"))
ENGINE_COLORS = {"2024": "#0969da", "2026": "#8250df"}   # any other engine: OTHER_COLOR
OTHER_COLOR = "#57606a"


def _columns(side: SideBySide) -> list:
    """(cluster name, caption title, colour) for each column."""
    if not side.across_engines:
        return list(SIDES)
    return [(c.engine, title, ENGINE_COLORS.get(c.engine, OTHER_COLOR))
            for c, title in zip(side.configs, side.titles())]


def compare_graph(side: SideBySide, max_edge: int = 24) -> graphviz.Digraph:
    diverged = (f"both {side.noun} agree on every operation" if side.diverged is None else
                f"they part ways at operation {side.diverged + 1}: {side.ops[side.diverged].text}")
    graph = graphviz.Digraph("compare", graph_attr={
        "rankdir": "TB", "fontname": "Helvetica", "fontsize": "12", "labelloc": "t",
        "label": f"the same {side.count} operation(s), both {side.noun} · {diverged}"},
        node_attr={"shape": "box", "style": "rounded,filled", "fillcolor": "white",
                   "fontname": "Helvetica", "fontsize": "11"},
        edge_attr={"color": "#57606a", "arrowsize": "0.7"})
    used: set = set()
    for (name, title, color), session in zip(_columns(side), side.sessions):
        frame = session.frames[-1] if session.frames else session.live_frame()
        tree, marks = frame.tree, NodeMarks(frame.marks)
        load_views(tree)
        returned = [r.result["slots"] for r in session.records if r.op.name == "match"]
        caption = f"{title}\n{tree.total_size} tokens · {frame.pool.used}/{frame.pool.size} slots used"
        if returned:
            caption += f"\nlast match: {len(returned[-1])} token(s), slots {compact_ranges(returned[-1])}"
        with graph.subgraph(name=f"cluster_{name}") as cluster:
            cluster.attr(label=caption, color=color, style="rounded", penwidth="2")
            for node in tree.root.walk():
                found = marks.of(node)
                used.update(found)
                cluster.node(f"{name}{node.id}", _label(node, found, marks, max_edge, tree), **_style(found, node))
                for child in node.children:
                    attrs = {}
                    if child.id in marks.wrong:
                        attrs = {"color": WRONG.color, "penwidth": "2", "style": "dashed"}
                    elif child.id in marks.path:
                        attrs = {"color": PATH.color, "penwidth": "2"}
                    cluster.edge(f"{name}{node.id}", f"{name}{child.id}", **attrs)
    if used:
        legend = "   ".join(f"{m.symbol} {m.name}" for m in ALL_MARKS if m in used)
        graph.node("legend", legend + "\n│ a match took only the tokens before it",
                   shape="plaintext", style="", fontsize="10")
    return graph


def _label(node: NodeSnapshot, found: list[Mark], marks: NodeMarks, max_edge: int, tree: TreeSnapshot) -> str:
    if not node.key:
        return f"root\n{tree.total_size} tokens"
    taken = marks.taken(node)
    if taken is None:
        edge = edge_text(node.key, max_edge)
    else:
        head, tail, note = split_edge_text(node.key, taken, max_edge)
        edge = f"{head}│{tail}\n({note})"
    symbols = "".join(m.symbol for m in found)
    held = held_text(node)   # by the node's type: today's nodes name their lock_ref, hits, priority
    return f"{symbols + ' ' if symbols else ''}{edge}\nslots {compact_ranges(node.value)}\n{held}"


def _style(found: list[Mark], node: NodeSnapshot) -> dict:
    if not node.key:
        return {"shape": "ellipse"}
    lasting = [m for m in found if m is not CURRENT]
    if not lasting:
        return {}
    return {"color": lasting[0].color, "fillcolor": lasting[0].fill, "penwidth": "2"}


def write_compare(side: SideBySide, path: str | Path, max_edge: int = 24) -> Path:
    """Write the diagram; the extension picks the format (.dot needs no Graphviz program)."""
    path = Path(path)
    fmt = format_for(path)
    graph = compare_graph(side, max_edge)
    try:
        data = graph.source.encode("utf-8") if fmt == "dot" else graph.pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise GraphvizError(f"cannot write .{fmt}: the Graphviz 'dot' program is not installed; "
                            "write a .dot file instead") from None
    try:
        atomic_write(path, data)     # a full disk leaves the old file whole, not truncated
    except OSError as exc:
        raise GraphvizError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
