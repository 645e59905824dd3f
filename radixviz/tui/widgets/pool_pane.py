"""The pool pane: one cell per KV slot, free / held by the tree / shared, touched slots marked
(and with a host tier, the host pool's grid below the device's).

The look is the render layer's ``PoolGrid``; its rows are built lazily (``PoolRows``), only
those on screen, because a step must repaint fast even on a pool of thousands of slots.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from types import SimpleNamespace

from radixviz.render.views import pool_lines
from radixviz.script.frames import PoolSnapshot

from .lines_view import LinesView, line_holding

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any
    from radixviz.lessons.lesson.model import Pointer
    from radixviz.script.frames import Frame


class PoolPane(LinesView):
    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._frame: Frame | SimpleNamespace | None = None   # or show_free's stand-in (a pool, no marks)
        self._pointers: tuple = ()
        self._ahead: tuple | None = None   # (frame, width, its rows) built by prefetch

    def show(self, frame, pointers: Sequence[Pointer] = ()) -> None:
        """Show ``frame``'s pool, scrolled to the slots its step touched, or to what a
        lesson's ``pointers`` (``slots``, ``host-slots`` and ``pool`` ones) name."""
        self._frame, self._pointers = frame, tuple(pointers)
        rows = self._rows_of(frame, self.view_width or 40)
        pointed: list[int] = []
        for pointer in self._pointers:
            if pointer.kind == "pool":
                pointed += line_holding(rows, str(pointer.target))
            else:
                lines = {rows.line_of(slot, host=pointer.kind == "host-slots") for slot in pointer.target}
                pointed += sorted(line for line in lines if line is not None)
        self.set_lines(rows, None if pointed else rows.focus, width=rows.width)
        self.show_pointed(pointed)

    def _rows_of(self, frame, width: int):
        ahead = self._ahead
        if ahead is not None and ahead[0] is frame and ahead[1] == width:
            return ahead[2]
        return pool_lines(frame.pool, frame.marks, width)

    def prefetch(self, frame: Frame) -> None:
        """Build ahead the rows that showing ``frame`` will put on screen, with their strips
        (for idle time before the step: see TreePane.prefetch)."""
        width = self.view_width or 40
        rows = self._rows_of(frame, width)
        self._ahead = (frame, width, rows)
        self.prefetch_lines(rows, rows.focus, width)

    def show_free(self, size: int) -> None:
        """A pool of ``size`` free slots, before the engine has loaded (no tree yet)."""
        self.show(SimpleNamespace(pool=PoolSnapshot((0,) * size, None), marks=None))

    def on_resize(self) -> None:
        if self._frame is not None:
            self.show(self._frame, self._pointers)
