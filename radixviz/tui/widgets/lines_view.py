"""A scrollable view of prepared Rich Text lines that renders only the rows on screen.

Textual renders a Static's whole content on every update; a 300-node tree is 300+ lines,
so the stepper's big panes use the Line API instead and convert just the visible lines.
The Line API paints segments as they are: a segment without a background shows the
terminal's default one, so every line is laid over the widget's own style (its theme
background and colour) before it is painted.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections import OrderedDict

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual._styles_cache import StylesCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip

if TYPE_CHECKING:
    from typing import Any


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """(first, length) of each run of consecutive numbers in the sorted ``indices``."""
    runs: list[tuple[int, int]] = []
    for index in indices:
        if runs and index == runs[-1][0] + runs[-1][1]:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((index, 1))
    return runs


class FramedRows(StylesCache):
    """Textual's StylesCache draws a pane's border and padding around a row of content anew
    each time the row is painted (~40 us a row of a 56-column pane). A view whose rows are
    strips kept from step to step (a code line, a tree node's line, a pool row) gets back
    the framed row drawn before for the same strip, as long as nothing else that goes into
    the frame (sizes, colours, the border's and outline's styles) changed: all of it is in
    the key. Rows of the border or padding themselves are drawn by Textual as before."""

    LIMIT = 1024   # framed rows kept; a pane shows a few dozen

    def __init__(self) -> None:
        super().__init__()
        self._framed: OrderedDict = OrderedDict()

    def render_line(self, styles, y, size, content_size, padding, base_background, background,
                    render_content_line, *rest):
        content_y = y - styles.gutter.top
        if not 0 <= content_y < content_size.height:
            return super().render_line(styles, y, size, content_size, padding, base_background, background,
                                       render_content_line, *rest)
        content = render_content_line(content_y)
        key = (id(content), size, content_size, padding, base_background, background, styles.border,
               styles.outline, styles.tint, styles.text_opacity, styles.hatch, *rest[2:])
        known = self._framed.get(key)
        if known is not None and known[0] is content:   # the entry keeps the strip: its id is its own
            self._framed.move_to_end(key)
            return known[1]
        strip = super().render_line(styles, y, size, content_size, padding, base_background, background,
                                    lambda _y: content, *rest)
        self._framed[key] = (content, strip)
        if len(self._framed) > self.LIMIT:
            self._framed.popitem(last=False)
        return strip


def line_holding(lines, text: str) -> list[int]:
    """[the index of the first of ``lines`` whose text holds ``text``], or []."""
    return next(([index] for index, line in enumerate(lines) if text in line.plain), [])


class LinesView(ScrollView, can_focus=True, inherit_bindings=False):
    """Focusable so that tab reaches it and the screen's ↑ ↓ pgup pgdn scroll it; it has no
    keys of its own (a scroll view's ← → home end would take the stepping keys)."""

    DEFAULT_CSS = "LinesView { height: 1fr; }"
    CUT_WITH_ELLIPSIS = False
    """True: a line wider than the view ends in "…" (for views that never scroll sideways)."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._styles_cache = FramedRows()
        self._lines: list[Text] = []
        self._strips: dict = {}
        self._strips_width = 0   # the view's width when ``_strips`` were drawn
        # strips by the line object they were rendered from, across sets of lines: a view
        # whose builder hands out the same Text for an unchanged row (a code line, a tree
        # node's line) renders it once, wherever it moves to
        self._by_line: OrderedDict = OrderedDict()   # (id(line), width) -> (line, strip)
        self._style: Style | None = None   # the widget's style, looked up once per set of lines
        self.pointed: list[int] = []   # the lines a lesson points at (show_pointed)
        self.fitted_width: int | None = None   # the width the lines were wrapped to (if they were)

    @property
    def view_width(self) -> int:
        """Columns a line gets, from the size laid out last: a pane hidden for a layout (a
        lesson's reading page) keeps its size but has no region, and is shown again with
        the same size, so no resize redraws lines built for a width of 0."""
        return max(0, self.outer_size.width - self.gutter.width)

    @property
    def lines(self):
        """The lines shown (a sequence of Text), on screen or scrolled out of view."""
        return self._lines

    def set_lines(self, lines, focus_line: int | None = None, width: int | None = None) -> None:
        """Show ``lines`` (a sequence of Text, maybe built lazily: then pass ``width``);
        scroll so ``focus_line`` (an index) is in view. Only the rows on screen whose text
        changed are painted again (a step changes a few rows of a tree or a pool)."""
        old_lines, old_strips, old_top = self._lines, self._strips, self.scroll_offset.y
        # a row's strip is cut to the width it was drawn for ("…" where it did not fit)
        old_width, self._strips_width = self._strips_width, self.scrollable_content_region.width
        self._lines, self._strips = lines, {}
        if width is None:
            width = max((line.cell_len for line in lines), default=0)
        self._resize_content(Size(width, len(lines)))
        target = self._scroll_target(focus_line)
        if target is not None:
            self.scroll_to(y=target, animate=False, immediate=True)
        top, height = self.scroll_offset.y, self.scrollable_content_region.height
        if top != old_top or not old_strips or height <= 0 or self._strips_width != old_width:
            self.refresh()
            return
        changed: list[int] = []
        for index in range(top, top + height):
            before = old_lines[index] if index < len(old_lines) else None
            after = lines[index] if index < len(lines) else None
            if before is None and after is None:
                continue
            if index in old_strips and (before is after or (
                    before is not None and after is not None
                    and before == after and before.style == after.style)):
                self._strips[index] = old_strips[index]   # Text == compares text and spans
            else:
                changed.append(index)
        # one repaint region per run of changed rows, not per row (each is a region to merge)
        for start, run in _runs(changed):
            self.refresh_lines(start, run)

    def _scroll_target(self, focus_line: int | None) -> int | None:
        """Where ``set_lines`` scrolls to for ``focus_line``: None while the line is in view,
        else the row that puts it a third of the way down."""
        if focus_line is None:
            return None
        height = max(1, self.scrollable_content_region.height)
        if self.scroll_y <= focus_line < self.scroll_y + height:
            return None
        return max(0, focus_line - height // 3)

    def bring_into_view(self, first: int, last: int) -> None:
        """Scroll so lines ``first`` to ``last`` are in view (as many as fit, from
        ``first``), a third of the way down where there is room; no scroll if they are."""
        height = max(1, self.scrollable_content_region.height)
        top = self.scroll_offset.y
        if top <= first and last < top + height:
            return
        span = last - first + 1
        target = first if span >= height else max(0, first - (height - span) // 3)
        self.scroll_to(y=target, animate=False, immediate=True)

    def refit(self) -> None:
        """Build the lines again for the pane's width (a view that wraps them overrides it)."""

    def show_pointed(self, lines: list[int]) -> None:
        """Bring the lines a lesson points at into view, the border lit while it does;
        ``pointed`` keeps them (for a reader of the screen to find them painted)."""
        self.pointed = sorted(lines)
        self.set_class(bool(lines), "-pointed")
        if lines:
            self.bring_into_view(self.pointed[0], self.pointed[-1])

    def scroll_rows(self, rows: int) -> None:
        """Scroll ``rows`` down (up when negative): the screen's ↑ ↓ pgup pgdn."""
        self.scroll_to(y=self.scroll_offset.y + rows, animate=False, immediate=True)

    def prefetch_lines(self, lines, focus_line: int | None, width: int) -> None:
        """Draw ahead the strips of the rows that ``set_lines(lines, focus_line, width)``
        will show, for idle time before a step (nothing is painted or scrolled)."""
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        target = self._scroll_target(focus_line)
        top = self.scroll_offset.y if target is None else min(target, max(0, len(lines) - height))
        for index in range(top, min(top + height, len(lines))):
            self._strip_of(lines[index], width)

    def _resize_content(self, size: Size) -> None:
        """Set the virtual size. A change of it asks Textual for a layout of the whole screen
        (a full repaint), yet a tree growing by a row changes nothing else: update the
        scrollbars here, and ask for a layout only when one appears or goes."""
        if size == self.virtual_size:
            return
        if not self.size.height:
            self.virtual_size = size   # not laid out yet
            return
        shown = (self.show_horizontal_scrollbar, self.show_vertical_scrollbar)
        before = self.virtual_size
        self.set_reactive(LinesView.virtual_size, size)
        if self._same_thumb(before, size):
            # a tree a row longer or shorter: the thumb is painted the same, and Textual
            # would repaint every row of the scrollbar all the same
            self.vertical_scrollbar.set_reactive(ScrollBar.window_virtual_size, size.height)
            self.scroll_y = self.validate_scroll_y(self.scroll_y)
            return
        self._scroll_update(size)   # Textual's own update of the scrollbars after a resize
        if (self.show_horizontal_scrollbar, self.show_vertical_scrollbar) != shown:
            self.refresh(layout=True)

    def _same_thumb(self, before: Size, after: Size) -> bool:
        """Whether only the content's height changes, the vertical scrollbar is there before
        and after (and alone), and its thumb is drawn in the same cells (ScrollBarRender)."""
        if before.width != after.width or not self.show_vertical_scrollbar or self.show_horizontal_scrollbar:
            return False
        bar = self.vertical_scrollbar
        window = bar.window_size
        if min(before.height, after.height) <= window or not bar.size.height:
            return False

        def cells(virtual: int) -> list:
            return ScrollBarRender.render_bar(size=bar.size.height, virtual_size=virtual, window_size=window,
                                              position=bar.position, thickness=bar.thickness).segments
        return cells(before.height) == cells(after.height)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if self._style is None:
            self._style = self.rich_style
        if self.fitted_width is not None and width != self.fitted_width and width > 0:
            # the lines were fitted (wrapped) to another width: a pane drawn while a layout
            # hid it can be shown again without a resize; fit them again, once, after this paint
            self.fitted_width = None
            self.call_later(self.refit)
        if index >= len(self._lines):
            return Strip.blank(width, self._style)
        strip = self._strips.get(index)
        if strip is None:
            strip = self._strips[index] = self._strip_of(self._lines[index], width)
        return strip.crop_extend(scroll_x, scroll_x + width, self._style)

    def _strip_of(self, line: Text, width: int) -> Strip:
        key = (id(line), width if self.CUT_WITH_ELLIPSIS else 0)
        known = self._by_line.get(key)
        if known is not None and known[0] is line:   # the entry keeps the line: its id is its own
            self._by_line.move_to_end(key)
            return known[1]
        shown = line
        if self.CUT_WITH_ELLIPSIS and line.cell_len > width:
            shown = line.copy()
            shown.truncate(width, overflow="ellipsis")
        segments = Segment.apply_style(shown.render(self.app.console), self._style)
        strip = Strip(segments, shown.cell_len)
        self._by_line[key] = (line, strip)
        if len(self._by_line) > 512:
            self._by_line.popitem(last=False)
        return strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style, self._strips = None, {}
        self._by_line.clear()
