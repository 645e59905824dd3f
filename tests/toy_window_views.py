"""The views of the toy window engine's nodes (tests/toy_window.py): each shows its ``depth``
in the tree, the Graphviz box and ``run --json``. Registered on the node's type, loaded by name
from the engine's spec (``views="toy_window_views"``) the first time one of its trees is drawn.
Its second component (the window pool and each node's copy) needs no view here: the shared
views draw every component an engine declares."""
from __future__ import annotations

from radixviz.render.views import DETAIL_STYLE, box_lines, node_details, node_fields

from toy_window import WindowNodeSnapshot


@node_details.register
def _(node: WindowNodeSnapshot, sep: str) -> list[tuple[str, str]]:
    return [*node_details.dispatch(object)(node, sep), (f"{sep}depth {node.depth}", DETAIL_STYLE)]


@box_lines.register
def _(node: WindowNodeSnapshot) -> tuple[str, ...]:
    return (*box_lines.dispatch(object)(node), f"depth {node.depth}")


@node_fields.register
def _(node: WindowNodeSnapshot) -> dict:
    return {"depth": node.depth}
