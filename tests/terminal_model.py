"""A terminal's screen as the app's updates leave it: the cells a real terminal would show
after every update Textual writes, for checking partial updates against full renders."""
from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.segment import ControlType, Segment


def _plain(style):
    # meta (the footer's @click actions) and link ids are not drawn: a cell is its look
    return style.clear_meta_and_links() if style is not None else None


class Terminal:
    """A grid of (character, style) cells, written by the segments of Textual's updates
    (``LayoutUpdate``, ``ChopsUpdate``) as a terminal reads the escape codes they become:
    a cursor move, then text written from there."""

    def __init__(self, width: int, height: int):
        self.width, self.height = width, height
        self.cells = [[(" ", None)] * width for _ in range(height)]

    def apply(self, update, console: Console) -> None:
        x = y = 0
        for segment in update.__rich_console__(console, console.options):
            if segment.control:
                for code in segment.control:
                    if code[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = code[1], code[2]
                continue
            if segment.text == "\n":
                x, y = 0, y + 1
                continue
            x = self._write(y, x, segment)

    def _write(self, y: int, x: int, segment: Segment) -> int:
        style = _plain(segment.style)
        for char in segment.text:
            width = cell_len(char)
            if 0 <= y < self.height and 0 <= x < self.width:
                self.cells[y][x] = (char, style)
                if width == 2 and x + 1 < self.width:
                    self.cells[y][x + 1] = ("", style)
            x += width
        return x

    def rows_differing_from(self, strips) -> list[tuple[int, str, str]]:
        """(row, shown here, in the full render) where ``strips`` (a full render of the
        screen) shows other cells."""
        expected = Terminal(self.width, self.height)
        for y, strip in enumerate(strips[:self.height]):
            x = 0
            for segment in strip:
                x = expected._write(y, x, segment)
        return [(y, self.text(y), expected.text(y)) for y in range(self.height)
                if self.cells[y] != expected.cells[y]]

    def text(self, y: int) -> str:
        return "".join(char for char, _ in self.cells[y])
