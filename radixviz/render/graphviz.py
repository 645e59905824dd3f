"""Graphviz diagrams of a tree, with the same marks as the Rich view.

``to_dot`` is pure and deterministic (same snapshot and marks, same text), so DOT output can be
compared byte for byte in tests. ``write`` picks the format from the file's extension and runs
the ``dot`` program for anything but ``.dot``.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .marks import ALL_MARKS, CURRENT, EVICTED, PATH, WRONG, NodeMarks, compact_ranges, edge_text

FORMATS = {".dot": "dot", ".gv": "dot", ".svg": "svg", ".png": "png", ".pdf": "pdf"}
INSTALL_HINT = "install Graphviz (apt-get install graphviz, brew install graphviz or dnf install graphviz)"


class GraphvizError(RuntimeError):
    """The diagram could not be written; the message is one line that says what to do."""


def _quote(text: str) -> str:
    """A DOT string: backslashes and quotes escaped, ``\\n`` breaks kept as DOT line breaks."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(**attrs) -> str:
    return ", ".join(f"{k}={_quote(str(v))}" for k, v in attrs.items())


def matcher_label(tree) -> str:
    """Which matcher built ``tree``, as a diagram's caption says it."""
    return "BUGGY matcher (pre-#7)" if tree.buggy_match else "fixed matcher"


def to_dot(tree, marks=None, *, max_edge: int = 24, title: str | None = None) -> str:
    """The tree as DOT text: one box per node with its edge, slots, ref count and last access."""
    node_marks = NodeMarks(marks)
    caption = title or (f"radix tree · {matcher_label(tree)} · {tree.total_size} tokens · "
                        f"{tree.evictable_size} evictable")
    out = [
        "digraph radix {",
        f"  graph [{_attrs(rankdir='TB', fontname='Helvetica', fontsize=12, labelloc='t', label=caption)}];",
        f"  node [{_attrs(shape='box', style='rounded,filled', fillcolor='white', fontname='Helvetica', fontsize=11)}];",
        f"  edge [{_attrs(color='#57606a', arrowsize=0.7)}];",
    ]
    used: set = set()
    for node in tree.root.walk():
        found = node_marks.of(node)
        used.update(found)
        if not node.key:
            label = f"root\n{tree.total_size} tokens"
            out.append(f"  n{node.id} [{_attrs(label=label, shape='ellipse', **_mark_attrs(found))}];")
        else:
            symbols = "".join(m.symbol for m in found)
            head = f"{symbols} {edge_text(node.key, max_edge)}" if symbols else edge_text(node.key, max_edge)
            label = f"{head}\nslots {compact_ranges(node.value)}\nref {node.ref} · t {node.last_access}"
            out.append(f"  n{node.id} [{_attrs(label=label, **_mark_attrs(found))}];")
        for child in node.children:
            style = ""
            if child.id in node_marks.wrong:
                style = _attrs(color=WRONG.color, penwidth=2, style="dashed")
            elif child.id in node_marks.path:
                style = _attrs(color=PATH.color, penwidth=2)
            out.append(f"  n{node.id} -> n{child.id}" + (f" [{style}]" if style else "") + ";")
    for i, (node_id, key) in enumerate(node_marks.evicted):
        used.add(EVICTED)
        label = f"{EVICTED.symbol} {edge_text(key, max_edge)}\nevicted"
        out.append(f"  ghost{i} [{_attrs(label=label, style='rounded,dashed', color=EVICTED.color, fontcolor=EVICTED.color)}];")
    if used:
        legend = "   ".join(f"{m.symbol} {m.name}" for m in ALL_MARKS if m in used)
        out.append(f"  legend [{_attrs(label=legend, shape='plaintext', style='', fontsize=10)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _mark_attrs(found) -> dict:
    if not found:
        return {}
    # the current step thickens the border; the colour tells the more lasting mark
    lasting = [m for m in found if m is not CURRENT] or found
    first = lasting[0]
    return {"color": first.color, "penwidth": 3 if CURRENT in found else 2,
            "fillcolor": first.fill}


def format_for(path) -> str:
    """``svg`` for ``x.svg`` and so on; raises GraphvizError for an unknown extension."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise GraphvizError(f"cannot tell the format of {path}: use .dot, .svg, .png or .pdf")
    return FORMATS[suffix]


def render(dot_text: str, fmt: str) -> bytes:
    """Run ``dot -T<fmt>``; raises GraphvizError with an install hint when ``dot`` is missing."""
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizError(f"cannot write .{fmt}: the Graphviz 'dot' program is not installed; "
                            f"{INSTALL_HINT}, or write a .dot file")
    proc = subprocess.run([exe, f"-T{fmt}"], input=dot_text.encode("utf-8"),
                          capture_output=True, check=False)
    if proc.returncode != 0:
        first = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[0]
        raise GraphvizError(f"dot failed on .{fmt} output: {first}")
    return proc.stdout


def write(frame_or_tree, path, marks=None, **dot_options) -> Path:
    """Write a frame (its tree and marks) or a bare tree to ``path``; the format comes from the
    extension. Returns the path written. Nothing is written when it fails."""
    path = Path(path)
    fmt = format_for(path)
    tree = getattr(frame_or_tree, "tree", frame_or_tree)
    if marks is None:
        marks = getattr(frame_or_tree, "marks", None)
    text = to_dot(tree, marks, **dot_options)
    data = text.encode("utf-8") if fmt == "dot" else render(text, fmt)
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise GraphvizError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
