"""The views of the toy window engine's nodes (tests/toy_window.py): each shows its ``depth``
in the tree, the Graphviz box and ``run --json``. Registered on the node's type, loaded by name
from the engine's spec (``views="toy_window_views"``) the first time one of its trees is drawn."""
from __future__ import annotations

from radixviz.render.views import DETAIL_STYLE, box_lines, node_details, node_fields

from toy_window import DepthNodeSnapshot


@node_details.register
def _(node: DepthNodeSnapshot, sep: str) -> list[tuple[str, str]]:
    return [*node_details.dispatch(object)(node, sep), (f"{sep}depth {node.depth}", DETAIL_STYLE)]


@box_lines.register
def _(node: DepthNodeSnapshot) -> tuple[str, ...]:
    return (*box_lines.dispatch(object)(node), f"depth {node.depth}")


@node_fields.register
def _(node: DepthNodeSnapshot) -> dict:
    return {"depth": node.depth}
