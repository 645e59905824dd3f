"""The views of a tree rebuilt from a server's KV events (radixviz watch): the header names the
stream, not the settings of an engine (no radixviz engine made it)."""
from __future__ import annotations

from radixviz.wire.tree_snapshot import StreamTreeSnapshot

from . import DETAIL_STYLE, header_parts


@header_parts.register
def _(tree: StreamTreeSnapshot) -> list[tuple[str, str]]:
    return [(" · from the server's KV events", DETAIL_STYLE)]
