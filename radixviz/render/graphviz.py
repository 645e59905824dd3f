"""Graphviz diagrams of a tree, with the same marks as the Rich view.

``diagram`` builds a ``graphviz.Digraph`` (the package quotes every label; ``escape`` keeps
backslashes literal), ``to_dot`` is its DOT text: pure and deterministic (same snapshot and
marks, same text), so it can be compared byte for byte in tests. ``to_svg`` is the one
snapshot-to-SVG call the exports share; ``write`` picks the format from the file's
extension. Anything but ``.dot`` needs Graphviz's ``dot`` program, run by the package.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any
    from ..cache.snapshot import TreeSnapshot
    from ..script.frames import Frame, Marks
    from .marks import Mark
    import graphviz

from radixviz.files import atomic_write

from .tree import namespace_groups, namespace_label, paged_text
from .marks import (ALL_MARKS, CURRENT, EVICTED, PATH, WRONG, NodeMarks, edge_text,
                    ghost_word, mark_name, split_edge_text)
from .views import box_lines, box_style, caption_parts, load_views, page_size_shown

FORMATS = {".dot": "dot", ".gv": "dot", ".svg": "svg", ".png": "png", ".pdf": "pdf"}
INSTALL_HINT = "install Graphviz (apt-get install graphviz, brew install graphviz or dnf install graphviz)"


class GraphvizError(RuntimeError):
    """The diagram could not be written; the message is one line that says what to do."""


def _label(*lines: str) -> str:
    """A label of several lines: each taken literally (backslashes, ``<...>``), joined by
    DOT's own ``\\n`` line break."""
    import graphviz   # graphviz: only when a diagram is drawn (an export), not at start-up
    parts = (part for line in lines for part in line.split("\n"))
    return graphviz.nohtml("\\n".join(graphviz.escape(part) for part in parts))


def _attrs(**attrs: object) -> dict:
    """Attribute values as the package wants them: text (a label keeps its ``nohtml`` type)."""
    return {key: value if isinstance(value, str) else str(value) for key, value in attrs.items()}


def matcher_label(tree: TreeSnapshot) -> str:
    """Which matcher built ``tree``, as a diagram's caption says it."""
    return "BUGGY matcher (pre-#7)" if tree.buggy_match else "fixed matcher"


def diagram(tree: TreeSnapshot, marks: Marks | None = None, *, max_edge: int = 24,
            title: str | None = None) -> graphviz.Digraph:
    """The tree as a Digraph: one box per node with its edge, slots, ref count and last access."""
    import graphviz   # graphviz: only when a diagram is drawn (an export), not at start-up
    node_marks = NodeMarks(marks)
    load_views(tree)   # the boxes and the caption say what the tree's type holds (render/views/)
    engine, sizes_after, always = caption_parts(tree)
    caption = (title or f"radix tree · {engine} · {tree.total_size} tokens · "
                        f"{tree.evictable_size} evictable{sizes_after}") + always
    page_size = page_size_shown(tree)
    dot = graphviz.Digraph(
        "radix",
        graph_attr=_attrs(rankdir="TB", fontname="Helvetica", fontsize=12, labelloc="t",
                          label=_label(caption)),
        node_attr=_attrs(shape="box", style="rounded,filled", fillcolor="white",
                         fontname="Helvetica", fontsize=11),
        edge_attr=_attrs(color="#57606a", arrowsize=0.7))
    used: set = set()
    home = _namespace_clusters(dot, tree)   # node id -> the subgraph its box goes in
    for node in tree.root.walk():
        found = node_marks.of(node)
        used.update(found)
        if not node.key:
            dot.node(f"n{node.id}", _label("root", f"{tree.total_size} tokens"), shape="ellipse",
                     **_mark_attrs(found))
        else:
            symbols = "".join(m.symbol for m in found)
            taken = node_marks.taken(node)   # only the pre-#7 matcher takes part of an edge
            if page_size is not None:
                edge = paged_text(node.key, page_size, max_edge)
            elif taken is None:
                edge = edge_text(node.key, max_edge)
            else:  # only the tokens really matched are marked: the cut shows where they end
                matched, rest, note = split_edge_text(node.key, taken, max_edge)
                edge = f"{matched}│{rest}\n({note})"
            head = f"{symbols} {edge}" if symbols else edge
            box = home.get(node.id, dot)   # its namespace's cluster, or the diagram itself
            look = box_style(node)         # the host tier's: a border per tier, dashed on the host only
            attrs = _mark_attrs(found) or _attrs(**{k: v for k, v in look.items() if k != "style"})
            if "style" in look:
                attrs["style"] = look["style"]
            box.node(f"n{node.id}", _label(head, *box_lines(node)), **attrs)
        for child in node.children:
            style = {}
            if child.id in node_marks.wrong:
                style = _attrs(color=WRONG.color, penwidth=2, style="dashed")
            elif child.id in node_marks.path:
                style = _attrs(color=PATH.color, penwidth=2)
            dot.edge(f"n{node.id}", f"n{child.id}", **style)
    for i, (_node_id, key) in enumerate(node_marks.evicted):
        used.add(EVICTED)
        dot.node(f"ghost{i}", _label(f"{EVICTED.symbol} {edge_text(key, max_edge)}", ghost_word(tree)),
                 style="rounded,dashed", color=EVICTED.color, fontcolor=EVICTED.color)
    for cluster in dict.fromkeys(home.values()):
        dot.subgraph(cluster)
    if used:
        legend = "   ".join(f"{m.symbol} {mark_name(m, tree)}" for m in ALL_MARKS if m in used)
        if node_marks.partial:
            legend += "\n│ the match took only the tokens before it"
        dot.node("legend", _label(legend), shape="plaintext", style="", fontsize="10")
    return dot


def _namespace_clusters(dot: graphviz.Digraph, tree: TreeSnapshot) -> dict:
    """One labelled cluster per namespace when the tree has namespaces: node id -> its cluster."""
    import graphviz   # graphviz: only when a diagram is drawn (an export), not at start-up
    groups = namespace_groups(tree)
    if groups is None:
        return {}
    home = {}
    for i, (name, children) in enumerate(groups):
        cluster = graphviz.Digraph(f"cluster_ns{i}", graph_attr=_attrs(
            label=_label(namespace_label(name)), style="dashed", color="#8250df", fontcolor="#8250df"))
        for child in children:
            for node in child.walk():
                home[node.id] = cluster
    return home


def to_dot(tree: TreeSnapshot, marks: Marks | None = None, **options: Any) -> str:
    """The diagram's DOT text (see ``diagram`` for the options)."""
    return diagram(tree, marks, **options).source


def _mark_attrs(found: list[Mark]) -> dict:
    if not found:
        return {}
    # the current step thickens the border; the colour tells the more lasting mark
    lasting = [m for m in found if m is not CURRENT] or found
    first = lasting[0]
    return _attrs(color=first.color, penwidth=3 if CURRENT in found else 2, fillcolor=first.fill)


def format_for(path: str | Path) -> str:
    """``svg`` for ``x.svg`` and so on; raises GraphvizError for an unknown extension."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise GraphvizError(f"cannot tell the format of {path}: use .dot, .svg, .png or .pdf")
    return FORMATS[suffix]


def render(graph: graphviz.Digraph, fmt: str) -> bytes:
    """``graph`` (a Digraph, or DOT text) laid out by Graphviz as ``fmt`` bytes; GraphvizError,
    one line, when ``dot`` is missing (with the install hint) or fails."""
    import graphviz   # graphviz: only when a diagram is drawn (an export), not at start-up
    if isinstance(graph, str):
        graph = graphviz.Source(graph)
    try:
        return graph.pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise GraphvizError(f"cannot write .{fmt}: the Graphviz 'dot' program is not installed; "
                            f"{INSTALL_HINT}, or write a .dot file") from None
    except graphviz.CalledProcessError as exc:
        stderr = (exc.stderr or b"").decode("utf-8", "replace").strip()
        raise GraphvizError(f"dot failed on .{fmt} output: "
                            f"{(stderr.splitlines() or ['no message'])[0]}") from None


def _tree_and_marks(frame_or_tree: Frame | TreeSnapshot, marks: Marks | None):
    """A frame's tree and marks, or a bare tree (and the marks given)."""
    tree = getattr(frame_or_tree, "tree", frame_or_tree)
    return tree, marks if marks is not None else getattr(frame_or_tree, "marks", None)


def to_svg(frame_or_tree: Frame | TreeSnapshot, marks: Marks | None = None, **options: Any) -> bytes:
    """A frame (its tree and marks) or a bare snapshot as SVG bytes: what every export that
    shows a diagram (files, HTML pages) embeds."""
    tree, marks = _tree_and_marks(frame_or_tree, marks)
    return render(diagram(tree, marks, **options), "svg")


def write(frame_or_tree: Frame | TreeSnapshot, path: str | Path, marks: Marks | None = None, **options: Any) -> Path:
    """Write a frame (its tree and marks) or a bare tree to ``path``; the format comes from the
    extension. Returns the path written. Nothing is written when it fails."""
    path = Path(path)
    fmt = format_for(path)
    tree, marks = _tree_and_marks(frame_or_tree, marks)
    graph = diagram(tree, marks, **options)
    data = graph.source.encode("utf-8") if fmt == "dot" else render(graph, fmt)
    try:
        atomic_write(path, data)     # a full disk leaves the old file whole, not truncated
    except OSError as exc:
        raise GraphvizError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
