"""The pool pane: one cell per KV slot, free / held by the tree / shared, touched slots marked.

The look is the render layer's ``PoolGrid``; rows are built lazily, only those on screen,
because a pool of thousands of slots is hundreds of rows and a step must repaint fast.
"""
from __future__ import annotations

from rich.console import Console
from rich.text import Text

from radixviz.render.pool import LABEL, STATES, TOUCHED_STYLE, PoolGrid, slot_symbol

from .lines_view import LinesView

_WRAPPER = Console(width=10_000, color_system=None)  # only wraps Text, never prints


class PoolRows:
    """A read-only sequence of the grid's lines (rows, then the legend), built on access."""

    def __init__(self, frame, width: int):
        self.pool, self.touched = frame.pool, set(frame.marks.slots)
        grid = PoolGrid(frame.pool, frame.marks)
        self.cols = grid.columns(width)
        self.rows = -(-self.pool.size // self.cols)
        self.legend = _legend(grid, width)
        self._built: dict = {}

    def __len__(self) -> int:
        return self.rows + len(self.legend)

    def __getitem__(self, index: int) -> Text:
        if index >= self.rows:
            return self.legend[index - self.rows]
        row = self._built.get(index)
        if row is None:
            row = self._built[index] = self._row(index * self.cols)
        return row

    def _row(self, start: int) -> Text:
        pool, row = self.pool, Text(no_wrap=True, overflow="ellipsis")
        row.append(f"{start:>{LABEL - 1}} ", style="dim")
        row.append("│", style="dim")
        for slot in range(start, min(start + self.cols, pool.size)):
            state = pool.state(slot)
            symbol, style = slot_symbol(state, pool.refcounts[slot]), STATES[state][1]
            if slot in self.touched:
                row.append(f"[{symbol}]", style=f"{style} {TOUCHED_STYLE}")
            else:
                row.append(f" {symbol} ", style=style)
        return row

    @property
    def width(self) -> int:
        return max([LABEL + 1 + 3 * self.cols] + [line.cell_len for line in self.legend])

    @property
    def focus(self) -> int | None:
        """The row of the first touched slot."""
        return min(self.touched) // self.cols if self.touched else None


def _legend(grid, width: int) -> list:
    legend = grid._legend() if hasattr(grid, "_legend") else Text("")
    return list(legend.wrap(_WRAPPER, width)) if legend.cell_len > width else [legend]


class PoolPane(LinesView):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._frame = None

    def show(self, frame) -> None:
        self._frame = frame
        rows = PoolRows(frame, self.scrollable_content_region.width or 40)
        self.set_lines(rows, rows.focus, width=rows.width)

    def on_resize(self) -> None:
        if self._frame is not None:
            self.show(self._frame)
