"""The views of a tree rebuilt from a server's KV events (radixviz watch): the header names the
stream, not the settings of an engine (no radixviz engine made it)."""
from __future__ import annotations

from radixviz.wire.tree_snapshot import StreamNodeSnapshot, StreamTreeSnapshot

from radixviz.render.marks import LOCKED

from . import DETAIL_STYLE, box_lines, compact_ranges, header_parts, mark_words, node_details


@header_parts.register
def _(tree: StreamTreeSnapshot) -> list[tuple[str, str]]:
    return [(" · from the server's KV events", DETAIL_STYLE)]


@mark_words.register
def _(tree: StreamTreeSnapshot) -> dict[str, str]:
    # a stream has no locks: its 'ref' counts a block's extra copies (one prompt in two namespaces)
    return {LOCKED.name: "held twice (ref > 0: the same block in two namespaces)"}


def _copies(node: StreamNodeSnapshot) -> str:
    return f"{node.ref + 1} copies" if node.ref else ""


@node_details.register
def _(node: StreamNodeSnapshot, sep: str) -> list[tuple[str, str]]:
    # the wire carries no slots and no clock: the tokens' places from the root, and copies
    shown = [f"tokens {compact_ranges(node.value)}", _copies(node)]
    return [(sep + sep.join(part for part in shown if part), DETAIL_STYLE)]


@box_lines.register
def _(node: StreamNodeSnapshot) -> tuple[str, ...]:
    return tuple(part for part in (f"tokens {compact_ranges(node.value)}", _copies(node)) if part)
