"""A lesson's Markdown as the app draws it: Rich's Markdown, with tables that never cut a word.

Rich gives each table column an ellipsis for what does not fit, so a code span longer than
its column (``--delay-shared-prefix`` beside two numbers at 60 columns) lost its end. Here a
table whose cells all fit on one line is drawn as Rich draws it; one that does not is drawn
a row to a line, its cells joined by │, wrapping like a paragraph, so every character
reaches the screen and each cell reads in one piece.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.markdown import Markdown, TableElement
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions


class WholeWordTable(TableElement):
    def __rich_console__(self, console: Console, options: ConsoleOptions):
        header = self.header.row.cells if self.header is not None and self.header.row is not None else []
        rows = [row.cells for row in self.body.rows] if self.body is not None else []
        table = Table(box=box.SIMPLE, pad_edge=False, style="markdown.table.border",
                      show_edge=True, collapse_padding=True)
        for column in header:
            heading = column.content.copy()
            heading.stylize("markdown.table.header")
            table.add_column(heading)
        for row in rows:
            table.add_row(*[cell.content for cell in row])
        # drawn as a grid only where no cell has to wrap: a wrapped cell reads row by row,
        # interleaved with its neighbours, and a long word in it is cut with an ellipsis
        natural = Measurement.get(console, options.update_width(10_000), table).maximum
        if natural <= options.max_width:
            yield table
            return
        if header:
            yield Text(" │ ", style="markdown.table.header").join(c.content for c in header)
        for cells in rows:
            yield Text("• ") + Text(" │ ").join(cell.content for cell in cells)


class LessonMarkdown(Markdown):
    """Markdown for a lesson's paragraphs: every character shown, whatever the width."""

    elements = {**Markdown.elements, "table_open": WholeWordTable}
