"""The views of a tree rebuilt from a server's KV events (radixviz watch): the header names the
stream, not the settings of an engine (no radixviz engine made it)."""
from __future__ import annotations

from radixviz.wire.tree_snapshot import StreamTreeSnapshot

from radixviz.render.marks import LOCKED

from . import DETAIL_STYLE, header_parts, mark_words


@header_parts.register
def _(tree: StreamTreeSnapshot) -> list[tuple[str, str]]:
    return [(" · from the server's KV events", DETAIL_STYLE)]


@mark_words.register
def _(tree: StreamTreeSnapshot) -> dict[str, str]:
    # a stream has no locks: its 'ref' counts a block's extra copies (one prompt in two namespaces)
    return {LOCKED.name: "held twice (ref > 0: the same block in two namespaces)"}
