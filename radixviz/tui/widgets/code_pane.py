"""The code pane: the function that did the current step, that line highlighted.

This is the engine's (or the session's) own source: the step's label is found on its line
by render/source_map.py. The lines that only report steps to the viewer (``if tr.active:
tr.emit(...)``, ``invalidate(node)``) are hidden, so the learner reads the algorithm as SGLang
wrote it; ``t`` shows them, dimmed, with their own line numbers. Without source files the
pane names the step instead.
"""
from __future__ import annotations

import io
import linecache
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from pathlib import Path

from rich.console import Console, ConsoleOptions, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from radixviz.render.source_map import function_span, locate, reporting_lines, strip_marker

from .lines_view import LinesView

if TYPE_CHECKING:
    from radixviz.script.frames import Frame

MARKER = "❱"


class CodeView:
    """The code pane's lines for one step: a header, then a row per source line (wrapped
    ones take several). A Rich renderable too (tests print it); the pane shows ``lines`` as
    they are when they were built for its ``width``."""

    def __init__(self, lines: tuple[Text, ...], width: int | None, offset: int = 0):
        self.lines, self.width = lines, width
        self.offset = offset   # source lines the window was moved from the step's (↑ ↓ on the pane)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        yield from self.lines


@lru_cache(maxsize=512)
def code_view(source: str, step: str, height: int, theme: str = "ansi_dark", width: int | None = None,
              trace: bool = False, offset: int = 0) -> CodeView | Text:
    """The function around the line of ``step``, at most ``height`` rows tall (a CodeView).

    The lines that only report steps are left out unless ``trace`` (then they are dimmed);
    the others keep their numbers in the file. Given the pane's ``width``, long source lines
    wrap (under their line number) instead of being cut at the pane's edge, as long as
    wrapping costs at most a quarter of the lines shown: on a narrow pane seeing more lines
    matters more than seeing each one whole.

    The function is highlighted once (``_function``) and its rows are kept (``_row``): a
    step elsewhere in the same function builds only its header and the two marked rows, and
    the pane repaints only those.

    A function longer than the pane is shown through a window that moves by bands of lines
    (``_steady_window``), not at every line: a loop's steps a few lines apart mostly show
    the same window, so a step repaints the marked rows, not the pane. ``offset`` moves the
    window that many lines down (up when negative) within the function, for a reader who
    scrolls the pane; the view's ``offset`` says how far it could.
    """
    site = locate(source, step)
    file, line = site.file, site.line   # line is known only where the file is
    span = function_span(file, line) if file is not None and line is not None else None
    if file is None or line is None or span is None:
        return Text(f"step {step} ({source or 'no source'}: no source file to show)", style="dim")
    texts, _ = _function(file, span, theme)
    reporting = reporting_lines(file) - {line}
    shown = [n for n in texts if trace or n not in reporting]
    hidden = len(texts) - len(shown)
    body = max(3, height - 1)
    at = shown.index(line)
    first, last = _steady_window(len(shown), at, body, lambda index: 1)
    wrap = False
    number_width = len(str(span[1]))
    code_width = max(1, width - number_width - 3) if width else None   # the gutter: ❱, number, spaces
    if width:
        heights = _wrapped_rows(file, span, theme, code_width)
        rows = [heights[n] for n in shown]
        wrapped = _steady_window(len(shown), at, body, rows.__getitem__)
        if any(rows[i] > 1 for i in range(first, last + 1)) and \
                4 * (wrapped[1] - wrapped[0] + 1) >= 3 * (last - first + 1):
            (first, last), wrap = wrapped, True
    offset = max(-first, min(offset, len(shown) - 1 - last))
    first, last = first + offset, last + offset
    header = Text.assemble((f"{Path(file).name}", "bold"), f" · {span[2]}() · line {line}",
                           no_wrap=True, overflow="ellipsis")
    if hidden:
        header.append(f" · {hidden} hidden (t)", style="dim")   # the tracing lines: t shows them
    if width and header.cell_len > width:
        header.truncate(width, overflow="ellipsis")
    lines = [header]
    for number in shown[first:last + 1]:
        lines.extend(_row(file, span, theme, number, number == line, number in reporting,
                          code_width, wrap))
    return CodeView(tuple(lines), width, offset)


def warm_functions(frames: Iterable[Frame], theme: str, size: tuple[int, int | None] | None = None,
                   limit: int = 16) -> int:
    """Prepare, ahead of their first step, the functions that ``frames`` step through (at
    most ``limit``): highlighting one takes Pygments 5-25 ms, finding a file's reporting
    lines parses it (~15 ms), several frames' time in the step that first shows them. Given
    the pane's ``size`` (``CodePane.view_size``), each step's whole view is built too (its
    wrapped rows are measured per function and width). Meant for the loading worker, off the
    UI thread. Returns how many functions."""
    seen: set = set()
    functions: set = set()
    for frame in frames:
        if (frame.source, frame.label) in seen:
            continue
        seen.add((frame.source, frame.label))
        site = locate(frame.source, frame.label)
        span = function_span(site.file, site.line) if site.file is not None and site.line is not None else None
        if span is None:
            continue
        if (site.file, span) not in functions:
            if len(functions) >= limit:
                break
            functions.add((site.file, span))
            _function(site.file, span, theme)
            reporting_lines(site.file)
        if size is not None:
            code_view(frame.source, frame.label, size[0], theme, size[1], False)
    return len(functions)


@lru_cache(maxsize=32)
def _function(file: str, span: tuple, theme: str) -> tuple[dict, dict]:
    """({line number: source text}, {line number: highlighted Text}) of the function at
    ``span``, its own indentation dropped (a method's 4 columns: the pane is narrow)."""
    lines = linecache.getlines(file)
    indent = " " * (len(lines[span[0] - 1]) - len(lines[span[0] - 1].lstrip(" ")))
    texts = {number: strip_marker(text[len(indent):] if text.startswith(indent) else text.lstrip(" "))
             for number, text in enumerate(lines[span[0] - 1:span[1]], start=span[0])}
    code = "".join(text if text.endswith("\n") else text + "\n" for text in texts.values())
    highlighted = Syntax(code, "python", theme=theme).highlight(code).split("\n", allow_blank=True)
    return texts, dict(zip(texts, highlighted))


@lru_cache(maxsize=64)
def _wrapped_rows(file: str, span: tuple, theme: str, code_width: int) -> dict:
    """{line number: rows it takes wrapped to ``code_width``} for the function at ``span``:
    measured once per function and width, not at every step that shows it."""
    return {number: max(1, len(Text(text.rstrip("\n")).wrap(_MEASURE, code_width)))
            for number, text in _function(file, span, theme)[0].items()}


@lru_cache(maxsize=2048)
def _row(file: str, span: tuple, theme: str, number: int, current: bool, dimmed: bool,
         code_width: int | None, wrap: bool) -> tuple:
    """The pane's rows of source line ``number``: its gutter (❱ on the step's line, the
    number), a space, the code; wrapped under the number, or cut at the pane's edge.
    Kept, so a row that did not change is the same Text (painted once)."""
    number_width = len(str(span[1]))
    code = _function(file, span, theme)[1][number].copy()
    if dimmed:
        code.stylize("dim")
    gutter = Text.assemble((f"{MARKER if current else ' '} {number:>{number_width}}",
                            "bold" if current else "dim"), " ")
    if code_width is None or not wrap:
        line = Text.assemble(gutter, code, no_wrap=True, overflow="ellipsis")
        line.rstrip()
        return (line,)   # cut at the pane's edge as the pane paints it
    free = code.copy()
    free.no_wrap, free.overflow = False, "fold"
    pieces = free.wrap(_MEASURE, code_width) or [Text("")]
    rows = []
    for index, piece in enumerate(pieces):
        piece.rstrip()
        lead = gutter if index == 0 else Text(" " * (number_width + 3))
        rows.append(Text.assemble(lead, piece, no_wrap=True))
    return tuple(rows)


_MEASURE = Console(width=200, file=io.StringIO(), color_system=None)   # only counts wrapped rows


def code_theme(app) -> str:
    """The syntax colours that read on ``app``'s theme: a light theme needs the light ones."""
    return "ansi_dark" if app.current_theme.dark else "ansi_light"


def _steady_window(count: int, line: int, rows: int, height: Callable[[int], int]) -> tuple[int, int]:
    """``_window`` over lines 0..count-1 for ``line``, placed by the first line of its band
    (half the rows wide) instead of by the line itself: every line of a band gets the
    same window, so stepping between nearby lines does not shift the pane. A line the band's
    window does not show (long wrapped lines) gets its own window."""
    band = max(1, rows // 2)
    anchor = line - line % band
    first, last = _window((0, count - 1), anchor, rows, height)
    if first <= line < last or line == last == count - 1:
        return first, last
    return _window((0, count - 1), line, rows, height)


def _window(span: tuple[int, int] | tuple[int, int, str], line: int, rows: int,
            height: Callable[[int], int]) -> tuple[int, int]:
    """The source lines (first, last) shown: the whole function if its lines fit in ``rows``
    rows (``height(n)``: the rows line n takes), else a window with ``line`` about a third
    of the way down."""
    first, last = span[0], span[1]
    if sum(height(n) for n in range(first, last + 1)) <= rows:
        return first, last
    top = bottom = line
    used = height(line)
    while top > first and used + height(top - 1) <= max(height(line), rows // 3):
        top -= 1
        used += height(top)
    while bottom < last and used + height(bottom + 1) <= rows:
        bottom += 1
        used += height(bottom)
    while top > first and used + height(top - 1) <= rows:
        top -= 1
        used += height(top)
    return top, bottom


_RENDERED: OrderedDict = OrderedDict()   # (id(renderable), width) -> (renderable, lines)


def code_lines(renderable: RenderableType, width: int, console: Console) -> tuple[Text, ...]:
    """``renderable`` (a ``code_view``) as Text lines ``width`` cells wide: rendered once,
    then shown by rows, so a step that only moves the marked line repaints two rows."""
    key = (id(renderable), width)
    hit = _RENDERED.get(key)
    if hit is not None and hit[0] is renderable:   # kept alive by the entry: the id is its own
        _RENDERED.move_to_end(key)
        return hit[1]
    options = console.options.update(width=width, height=None)
    rows: list[Text] = []
    for segments in console.render_lines(renderable, options, pad=False):
        # an unstyled segment's None reads as "" (Text.append styles neither)
        line = Text.assemble(*((seg.text, seg.style or "") for seg in segments if not seg.control),
                             no_wrap=True)
        line.rstrip()   # a wrapped line's last space, or padding: the pane has no background
        rows.append(line)
    lines = tuple(rows)
    _RENDERED[key] = (renderable, lines)
    if len(_RENDERED) > 128:
        _RENDERED.popitem(last=False)
    return lines


class CodePane(LinesView):
    """Shows the code of the current frame."""

    DEFAULT_CSS = "CodePane { height: 1fr; overflow: hidden hidden; }"

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._where: tuple | None = None
        self._content: RenderableType = Text("")
        self.trace = False   # show the lines that only report steps (the t key)
        self.window_shift = 0      # lines the reader scrolled the window by, until the next step

    @property
    def content(self) -> RenderableType:
        """The renderable shown (a ``code_view``)."""
        return self._content

    def update(self, renderable: RenderableType) -> None:
        """Show ``renderable``, fitted to the pane's width (a CodeView built for that width
        as it is: its rows are kept from step to step)."""
        self._content = renderable
        width = self.scrollable_content_region.width or 80
        if isinstance(renderable, CodeView) and renderable.width == width:
            lines = renderable.lines
        else:
            lines = code_lines(renderable, width, self.app.console)
        self.set_lines(lines, width=width)

    def view_size(self) -> tuple[int, int | None]:
        """(rows, columns) a ``code_view`` is built for here (columns None before layout)."""
        return max(4, self.size.height or 12), self.scrollable_content_region.width or None

    def show(self, source: str, step: str) -> None:
        """Show the code of ``step`` in module ``source`` (a frame's ``source`` and ``label``)."""
        if self._where is None or self._where[:2] != (source, step):
            self.window_shift = 0   # a new step shows its own line again
        arguments = self._view_arguments(source, step)
        if arguments != self._where:
            self._where = arguments
            view = code_view(*arguments)
            self.window_shift = view.offset if isinstance(view, CodeView) else 0
            self.update(view)

    def scroll_rows(self, rows: int) -> None:
        """Move the window over the function ``rows`` lines (the screen's ↑ ↓ pgup pgdn):
        the pane shows a window of the function, not the whole file, so it moves the window."""
        if self._where is not None:
            self.window_shift += rows
            self.show(*self._where[:2])

    def prefetch(self, source: str, step: str) -> None:
        """Build ahead the view of ``step`` and its rows' strips (for idle time before the
        step: see TreePane.prefetch)."""
        arguments = self._view_arguments(source, step)[:6]   # the next step shows its own line
        view, width = code_view(*arguments), arguments[4]
        if isinstance(view, CodeView) and width is not None and view.width == width:
            self.prefetch_lines(view.lines, None, width)

    def _view_arguments(self, source: str, step: str) -> tuple:
        """``code_view``'s arguments for ``step`` at this pane's size, colours and trace setting."""
        height, width = self.view_size()
        # the offset only when scrolled: the loading worker's views (warm_functions) are
        # cached under the six arguments, and a step that shows its own line finds them
        return (source, step, height, code_theme(self.app), width, self.trace) + \
            ((self.window_shift,) if self.window_shift else ())

    def toggle_trace(self) -> bool:
        """Show the tracing lines if hidden, hide them if shown; return whether shown now."""
        self.trace = not self.trace
        if self._where is not None:
            self.show(*self._where[:2])
        return self.trace

    def on_mount(self) -> None:
        # a light theme needs the light syntax colours: redraw when the theme changes
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.on_resize())

    def on_resize(self) -> None:
        if self._where is not None:
            self.show(*self._where[:2])
        else:
            self.update(self._content)   # drawn for another width: fit it again
