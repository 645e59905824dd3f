"""A scrollable view of prepared Rich Text lines that renders only the rows on screen.

Textual renders a Static's whole content on every update; a 300-node tree is 300+ lines,
so the stepper's big panes use the Line API instead and convert just the visible lines.
The Line API paints segments as they are: a segment without a background shows the
terminal's default one, so every line is laid over the widget's own style (its theme
background and colour) before it is painted.
"""
from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class LinesView(ScrollView, can_focus=False):
    DEFAULT_CSS = "LinesView { height: 1fr; }"
    CUT_WITH_ELLIPSIS = False
    """True: a line wider than the view ends in "…" (for views that never scroll sideways)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._lines: list[Text] = []
        self._strips: dict = {}
        self._style = None      # the widget's style, looked up once per set of lines

    @property
    def lines(self):
        """The lines shown (a sequence of Text), on screen or scrolled out of view."""
        return self._lines

    def set_lines(self, lines, focus_line: int | None = None, width: int | None = None) -> None:
        """Show ``lines`` (a sequence of Text, maybe built lazily: then pass ``width``);
        scroll so ``focus_line`` (an index) is in view."""
        self._lines, self._strips, self._style = lines, {}, None
        if width is None:
            width = max((line.cell_len for line in lines), default=0)
        self.virtual_size = Size(width, len(lines))
        if focus_line is not None:
            height = max(1, self.scrollable_content_region.height)
            if not self.scroll_y <= focus_line < self.scroll_y + height:
                self.scroll_to(y=max(0, focus_line - height // 3), animate=False, immediate=True)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if self._style is None:
            self._style = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, self._style)
        strip = self._strips.get(index)
        if strip is None:
            line = self._lines[index]
            if self.CUT_WITH_ELLIPSIS and line.cell_len > width:
                line = line.copy()
                line.truncate(width, overflow="ellipsis")
            segments = Segment.apply_style(line.render(self.app.console), self._style)
            strip = self._strips[index] = Strip(segments, line.cell_len)
        return strip.crop_extend(scroll_x, scroll_x + width, self._style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style, self._strips = None, {}
