"""The tree pane: the Rich tree view of the frame, scrollable, following the current node."""
from __future__ import annotations

from radixviz.render.tree import TreeView

from radixviz.tui.frame_cache import per_frame
from .lines_view import LinesView


# A few dozen frames: enough to step back and forth for free, and few enough that the
# garbage collector's full passes stay short (hundreds of cached trees made them ~100 ms).
@per_frame(24)
def tree_lines(frame) -> tuple[list, int | None]:
    """(the tree's lines, index of the line of the step's first node or None)."""
    view = TreeView(frame.tree, frame.marks, legend=True)
    shown = (view.line_of(node_id) for node_id in frame.marks.current)
    focus = min((line for line in shown if line is not None), default=None)
    return view.lines(), focus


class TreePane(LinesView):
    """The tree of the frame shown, scrolled so the step's node is in view."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.focus_line: int | None = None   # the line of the step's node, if it has one

    def show(self, frame) -> None:
        lines, self.focus_line = tree_lines(frame)
        self.set_lines(lines, self.focus_line)
