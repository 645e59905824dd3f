"""The pool pane: one cell per KV slot, free / held by the tree / shared, touched slots marked.

The look is the render layer's ``PoolGrid``; rows are built lazily, only those on screen,
because a pool of thousands of slots is hundreds of rows and a step must repaint fast.
"""
from __future__ import annotations

from radixviz.render.pool import CELL, LABEL, PoolGrid

from .lines_view import LinesView


class PoolRows:
    """A read-only sequence of the grid's lines (rows, then the legend), built on access."""

    def __init__(self, frame, width: int):
        self.grid = PoolGrid(frame.pool, frame.marks)
        self.touched = frame.marks.slots
        self.cols = self.grid.columns(width)
        self.rows = -(-frame.pool.size // self.cols)
        self.legend = self.grid.legend_lines(width)
        self._built: dict = {}

    def __len__(self) -> int:
        return self.rows + len(self.legend)

    def __getitem__(self, index: int):
        if index >= self.rows:
            return self.legend[index - self.rows]
        row = self._built.get(index)
        if row is None:
            row = self._built[index] = self.grid.row(index * self.cols, self.cols)
        return row

    @property
    def width(self) -> int:
        return max([LABEL + 1 + CELL * self.cols] + [line.cell_len for line in self.legend])

    @property
    def focus(self) -> int | None:
        """The row of the first touched slot."""
        return min(self.touched) // self.cols if self.touched else None


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
