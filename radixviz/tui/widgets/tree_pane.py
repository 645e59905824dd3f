"""The tree pane: the Rich tree view of the frame, scrollable, following the current node."""
from __future__ import annotations

from radixviz.render.marks import CURRENT
from radixviz.render.tree import TreeView

from .frame_cache import per_frame
from .lines_view import LinesView


# A few dozen frames: enough to step back and forth for free, and few enough that the
# garbage collector's full passes stay short (hundreds of cached trees made them ~100 ms).
@per_frame(24)
def tree_lines(frame) -> tuple[list, int | None]:
    """(the tree's lines, index of the line of the current node or None)."""
    lines = TreeView(frame.tree, frame.marks, legend=True).lines()
    marker = f"── {CURRENT.symbol}"
    focus = next((i for i, line in enumerate(lines) if marker in line.plain), None)
    return lines, focus


class TreePane(LinesView):
    def show(self, frame) -> None:
        lines, focus = tree_lines(frame)
        self.set_lines(lines, focus)
