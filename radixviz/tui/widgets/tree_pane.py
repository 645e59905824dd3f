"""The tree pane: the Rich tree view of the frame, scrollable, following the current node.

The pane never scrolls sideways (no key does, and a half-drawn scrollbar at the bottom read
as a stray mark): a line too wide for it wraps between its parts (edge, slots, tier,
hashes...), so what identifies a node is never cut; the header, which carries the counters
and the matcher, wraps between words. Only a tree of hundreds of lines cuts its node lines
with "…" (wrapping would build every line of it at each step).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from rich.text import Text

from radixviz.lessons.lesson.pointers import pointed_node
from radixviz.render.tree import TreeView
from radixviz.render.wrap import wrap_parts

from radixviz.tui.frame_cache import per_frame
from .lines_view import LinesView, line_holding

if TYPE_CHECKING:
    from typing import Any
    from rich.console import Console
    from radixviz.lessons.lesson.model import Pointer
    from radixviz.script.frames import Frame


# A few dozen frames: enough to step back and forth for free, and few enough that the
# garbage collector's full passes stay short (hundreds of cached trees made them ~100 ms).
@per_frame(24)
def tree_view(frame: Frame) -> tuple[TreeView, int | None]:
    """(the frame's tree view, whose rows are built as they are shown; index of the line of
    the step's first node or None)."""
    view = TreeView(frame.tree, frame.marks, legend=True)
    shown = (view.line_of(node_id) for node_id in frame.marks.current)
    return view, min((line for line in shown if line is not None), default=None)


class WrappedRows(Sequence):
    """The tree's rows as the pane shows them: the header wrapped between words, and each of
    the first ``upto`` lines that does not fit wrapped between its parts (``wrap_parts``).
    Lines past ``upto`` are shown as they are (cut with "…"): a tree of thousands of lines
    is built only where it is on screen, and wrapping them would build them all."""

    def __init__(self, rows, width: int, console: Console, upto: int):
        self.rows, self.upto = rows, max(1, min(upto, len(rows)))
        self.pieces = [wrapped(rows[0], width, console) if width > 0 else [rows[0]]]
        self.pieces += [wrap_parts(rows[i], width) for i in range(1, self.upto)]
        self.starts = list(accumulate((len(p) for p in self.pieces), initial=0))
        self.head = self.starts[-1]

    def __len__(self) -> int:
        return self.head + len(self.rows) - self.upto

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index < self.head:
            line = bisect_right(self.starts, index) - 1
            return self.pieces[line][index - self.starts[line]]
        return self.rows[index - self.head + self.upto]

    def shown_at(self, line: int) -> int:
        """The first row of the tree's line ``line``."""
        return self.starts[line] if line < self.upto else line - self.upto + self.head


def wrapped(line: Text, width: int, console: Console) -> list[Text]:
    """``line`` broken between words onto lines of at most ``width`` cells."""
    if line.cell_len <= width:
        return [line]
    free = line.copy()
    free.no_wrap, free.overflow = False, "fold"
    return list(free.wrap(console, width))


class TreePane(LinesView):
    """The tree of the frame shown, scrolled so the step's node is in view."""

    DEFAULT_CSS = "TreePane { overflow-x: hidden; }"
    CUT_WITH_ELLIPSIS = True
    # a tree of up to this many lines wraps each line that does not fit (a lesson's, a
    # sandbox's); a bigger one cuts them, so a step still builds only the rows on screen
    WRAP_LINES = 400

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.focus_line: int | None = None   # the line of the step's node, if it has one
        self._frame: Frame | None = None
        self._pointers: tuple = ()
        self._wrap_width = 0   # the width the last rows were wrapped to

    def show(self, frame: Frame, pointers: Sequence[Pointer] = ()) -> None:
        """Show ``frame``, scrolled to its step's node, or to what a lesson's ``pointers``
        (``node`` and ``tree`` ones) name."""
        self._frame, self._pointers = frame, tuple(pointers)
        view, focus = tree_view(frame)
        width = self.view_width
        lines = self._rows(view, width)
        self.focus_line = None if focus is None else lines.shown_at(focus)
        pointed: list[int] = []
        for pointer in self._pointers:
            if pointer.kind == "node":
                node = pointed_node(frame.tree, str(pointer.target))
                line = None if node is None else view.line_of(node)
                if line is not None:   # every row of the node's line
                    pointed += range(lines.shown_at(line), lines.shown_at(line + 1))
            else:
                pointed += line_holding(lines, str(pointer.target))
        # the pane never scrolls sideways (lines wrap, or end in "…"): its width is the lines' width
        self.set_lines(lines, None if pointed else self.focus_line, width=max(1, width))
        self.fitted_width = self._wrap_width
        self.show_pointed(pointed)

    def refit(self) -> None:
        if self._frame is not None:
            self.show(self._frame, self._pointers)

    def _rows(self, view: TreeView, width: int) -> WrappedRows:
        rows = view.rows
        upto = len(rows) if len(rows) <= self.WRAP_LINES else 1
        lines = WrappedRows(rows, width, self.app.console, upto)
        bar = self.styles.scrollbar_size_vertical
        self._wrap_width = width
        if len(lines) > self.outer_size.height - self.gutter.height and not self.show_vertical_scrollbar and bar:
            # the scrollbar these lines bring takes columns from them: wrap to what is left
            self._wrap_width = width - bar
            lines = WrappedRows(rows, width - bar, self.app.console, upto)
        return lines

    def prefetch(self, frame: Frame) -> None:
        """Build ahead what showing ``frame`` will need: its view, and the rows it will show
        (where its step's node scrolls the pane to) with their strips. For idle time before
        the step: the step then finds them built, and a scroll to an unseen part of a big
        tree no longer builds twenty rows while the learner waits."""
        width = self.view_width
        if width <= 0:
            return
        view, focus = tree_view(frame)
        lines = self._rows(view, width)
        self.prefetch_lines(lines, None if focus is None else lines.shown_at(focus), width)

    def show_lines(self, lines: list) -> None:
        """Show ``lines`` instead of a frame (before the engine has loaded)."""
        self._frame = None
        self.focus_line = None
        self.set_lines(lines, width=max(1, self.view_width))

    def on_resize(self) -> None:
        if self._frame is not None:
            self.show(self._frame, self._pointers)
