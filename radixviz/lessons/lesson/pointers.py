"""What a lesson's ``<!-- show: ... -->`` marks point at, found in a frame: the node a
``node`` pointer names, and whether a pointer names something the frame has at all (what
``lessons --check`` reports). The app's panes bring what is found into view."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..scenario import edge_text, whole_key

if TYPE_CHECKING:
    from ...cache.snapshot import TreeSnapshot
    from ...script.frames import Frame
    from .model import Pointer


def pointed_node(tree: TreeSnapshot, text: str) -> int | None:
    """The id of the node whose key from the root is ``text``, else of the one node whose
    edge is ``text``; None when there is none (or several edges read so)."""
    nodes = [node for node in tree.root.walk() if node.key]
    whole = [node.id for node in nodes if whole_key(tree, node.id) == text]
    if whole:
        return whole[0]
    edges = [node.id for node in nodes if edge_text(node.key) == text]
    return edges[0] if len(edges) == 1 else None


def pointer_problem(pointer: Pointer, frame: Frame) -> str | None:
    """Why ``pointer`` points at nothing in ``frame`` (the frame its paragraph is shown
    beside), or None. Text pointers are read on screen only (the painted-lesson test)."""
    if pointer.kind == "node" and pointed_node(frame.tree, str(pointer.target)) is None:
        return f"show: no node has the key or edge {pointer.target!r} here"
    if pointer.kind in ("slots", "host-slots"):
        # host slots: the pool of the component called host (the host tier's second), if any
        host = next((i for i, c in enumerate(frame.pool.pooled, start=1) if c.name == "host"), None)
        size = frame.pool.size if pointer.kind != "host-slots" else 0 if host is None else len(frame.pool.counts(host))
        outside = [slot for slot in pointer.target if not 0 <= int(slot) < size]
        if outside:
            pool = "host pool" if pointer.kind == "host-slots" else "pool"
            return f"show: slot {outside[0]} is outside the {pool} ({size} slots) here"
    return None
