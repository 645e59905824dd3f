"""Lines that do not fit their pane, wrapped instead of cut.

A tree line is a guide (``│   ├── ``), then parts two spaces apart: marks and edge, slots,
tiers, hashes, counts. ``wrap_parts`` keeps each part whole and moves the parts that do not
fit onto rows under the node, its guide continued, so what identifies a node (its edge, its
tier, its page hashes) is never cut at the pane's edge. A legend is parts too. ``wrap_words``
wraps prose (a pool's notes) between words.
"""
from __future__ import annotations

import io
import re
from collections import OrderedDict

from rich.console import Console
from rich.text import Text

_PART = re.compile(r"  +(?=\S)")             # two spaces or more before a part
_CONTINUED = str.maketrans({"├": "│", "└": " ", "─": " "})
_WRAPPED: OrderedDict = OrderedDict()      # (id(line), width) -> (line, its rows)
_CONSOLE = Console(width=200, color_system=None, file=io.StringIO())   # wrap() reads its settings only


def wrap_parts(line: Text, width: int) -> list[Text]:
    """``line`` as rows of at most ``width`` cells, cut between its parts (a part wider than
    a row is folded over rows of its own). The rows of a line seen before at this width are
    the rows built then (read-only), so a view repaints none of them."""
    if line.cell_len <= width or width < 8:
        return [line]
    key = (id(line), width)
    known = _WRAPPED.get(key)
    if known is not None and known[0] is line:
        _WRAPPED.move_to_end(key)
        return known[1]
    rows = _wrap(line, width)
    _WRAPPED[key] = (line, rows)
    if len(_WRAPPED) > 4096:
        _WRAPPED.popitem(last=False)
    return rows


def _wrap(line: Text, width: int) -> list[Text]:
    plain = line.plain
    guide = len(plain) - len(plain.lstrip("│├└─ "))
    # under a node the tree's lines go on, and its parts sit two columns in
    indent = plain[:guide].translate(_CONTINUED) + ("  " if guide else "")
    if len(indent) > width // 2:
        indent = indent[:width // 2]
    cuts = [guide] + [m.end() for m in _PART.finditer(plain, guide)]
    parts = [piece for piece in line.divide(cuts)[1:] if piece.plain.strip()]
    guide_style = line.get_style_at_offset(_CONSOLE, 0) if guide else ""
    rows: list[Text] = []
    row = line[:guide]

    def next_row() -> Text:
        rows.append(row)
        return Text(indent, style=guide_style)

    for part in parts:
        text = part.copy()
        text.rstrip()
        if row.cell_len > len(indent) and row.cell_len + 2 + text.cell_len > width:
            row = next_row()
        elif row.cell_len > guide:
            row.append("  ")
        room = width - row.cell_len
        if text.cell_len > room:   # wider than a row: folded over rows of its own, never cut
            if row.cell_len > len(indent):
                row = next_row()
            folded = text.wrap(_CONSOLE, max(1, width - row.cell_len), overflow="fold")
            for piece in folded[:-1]:
                row.append_text(piece)
                row = next_row()
            text = folded[-1]
        row.append_text(text)
    rows.append(row)
    for each in rows:
        each.no_wrap, each.overflow = True, "ellipsis"
    return rows


def wrap_words(line: Text, width: int) -> list[Text]:
    """Prose ``line`` wrapped between words to ``width`` cells (a word too long folds)."""
    if line.cell_len <= width or width < 8:
        return [line]
    free = line.copy()
    free.no_wrap, free.overflow = False, "fold"
    rows = list(free.wrap(_CONSOLE, width))
    for row in rows:
        row.rstrip()   # the space a row was broken at
    return rows
