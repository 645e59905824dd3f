"""The tree pane: the Rich tree view of the frame, scrollable, following the current node.

The pane never scrolls sideways (no key does, and a half-drawn scrollbar at the bottom read
as a stray mark): node lines too wide for it end in "…", and the header line, which carries
the counters and the matcher, wraps onto as many lines as it needs instead of being cut.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Sequence

from rich.text import Text

from radixviz.render.tree import TreeView

from radixviz.tui.frame_cache import per_frame
from .lines_view import LinesView

if TYPE_CHECKING:
    from typing import Any
    from rich.console import Console
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


class HeaderedRows(Sequence):
    """The tree's rows with its header line replaced by ``header`` (the header wrapped to
    the pane), still built only when read."""

    def __init__(self, header: list, rows):
        self.header, self.rows = header, rows

    def __len__(self) -> int:
        return len(self.header) + len(self.rows) - 1

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index < len(self.header):
            return self.header[index]
        return self.rows[index - len(self.header) + 1]


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

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.focus_line: int | None = None   # the line of the step's node, if it has one
        self._frame: Frame | None = None

    def show(self, frame: Frame) -> None:
        self._frame = frame
        view, focus = tree_view(frame)
        rows = view.rows
        width = self.scrollable_content_region.width
        header = wrapped(rows[0], width, self.app.console) if width > 0 else [rows[0]]
        self.focus_line = None if focus is None else focus + len(header) - 1
        # the pane never scrolls sideways (lines end in "…"): its width is the lines' width
        self.set_lines(HeaderedRows(header, rows), self.focus_line, width=max(1, width))

    def prefetch(self, frame: Frame) -> None:
        """Build ahead what showing ``frame`` will need: its view, and the rows it will show
        (where its step's node scrolls the pane to) with their strips. For idle time before
        the step: the step then finds them built, and a scroll to an unseen part of a big
        tree no longer builds twenty rows while the learner waits."""
        width = self.scrollable_content_region.width
        if width <= 0:
            return
        view, focus = tree_view(frame)
        rows = view.rows
        header = wrapped(rows[0], width, self.app.console)
        focus_line = None if focus is None else focus + len(header) - 1
        self.prefetch_lines(HeaderedRows(header, rows), focus_line, width)

    def show_lines(self, lines: list) -> None:
        """Show ``lines`` instead of a frame (before the engine has loaded)."""
        self._frame = None
        self.focus_line = None
        self.set_lines(lines, width=max(1, self.scrollable_content_region.width))

    def on_resize(self) -> None:
        if self._frame is not None:
            self.show(self._frame)
