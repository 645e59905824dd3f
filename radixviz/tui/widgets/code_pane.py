"""The code pane: the function that did the current step, that line highlighted.

This is the engine's (or the session's) own source: the step's label is found on its line
by render/source_map.py. Lines that only report steps to the viewer are dimmed so the
original algorithm stands out. Without source files the pane names the step instead.
"""
from __future__ import annotations

import io
import linecache
from functools import lru_cache
from pathlib import Path

from rich.console import Console, Group
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static

from radixviz.render.source_map import function_span, locate, reporting_lines, strip_marker


@lru_cache(maxsize=512)
def code_view(source: str, step: str, height: int, theme: str = "ansi_dark", width: int | None = None):
    """A renderable of the function around the line of ``step``, at most ``height`` rows tall.

    Given the pane's ``width``, long source lines wrap (under their line number) instead of
    being cut at the pane's edge, as long as wrapping costs at most a quarter of the lines
    shown: on a narrow pane seeing more lines matters more than seeing each one whole.
    """
    site = locate(source, step)
    span = function_span(site.file, site.line) if site.line is not None else None
    if span is None:
        return Text(f"step {step} ({source or 'no source'}: no source file to show)", style="dim")
    file, line = site.file, site.line
    lines = linecache.getlines(file)
    # drop the indentation the def itself has (a method's 4 columns): the pane is narrow
    indent = " " * (len(lines[span[0] - 1]) - len(lines[span[0] - 1].lstrip(" ")))
    texts = {number: strip_marker(text[len(indent):] if text.startswith(indent) else text.lstrip(" "))
             for number, text in enumerate(lines[span[0] - 1:span[1]], start=span[0])}
    body = max(3, height - 1)
    first, last = _window(span, line, body, lambda number: 1)
    wrap = False
    if width:
        code_width = max(1, width - len(str(span[1])) - 3)   # the gutter: ❱, number, spaces
        rows = {n: max(1, len(Text(t.rstrip("\n")).wrap(_MEASURE, code_width))) for n, t in texts.items()}
        wrapped = _window(span, line, body, rows.__getitem__)
        if any(rows[n] > 1 for n in range(first, last + 1)) and \
                4 * (wrapped[1] - wrapped[0] + 1) >= 3 * (last - first + 1):
            (first, last), wrap = wrapped, True
    code = "".join(texts[number] for number in range(first, last + 1))
    syntax = Syntax(code, "python", theme=theme, line_numbers=True, start_line=first,
                    highlight_lines={line}, word_wrap=wrap, code_width=None)   # no background
    # of its own: the code sits on the pane's (a light theme's too), like the tree and pool
    for number in reporting_lines(file):
        if first <= number <= last:
            syntax.stylize_range("dim", (number - first + 1, 0), (number - first + 2, 0))
    header = Text.assemble((f"{Path(file).name}", "bold"), f" · {span[2]}() · line {line}",
                           no_wrap=True, overflow="ellipsis")
    return Group(header, syntax)


_MEASURE = Console(width=200, file=io.StringIO(), color_system=None)   # only counts wrapped rows


def _window(span, line: int, rows: int, height) -> tuple[int, int]:
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


class CodePane(Static):
    """Shows the code of the current frame."""

    DEFAULT_CSS = "CodePane { height: 1fr; overflow: hidden hidden; }"

    def __init__(self, **kwargs):
        super().__init__("", **kwargs)
        self._where: tuple | None = None

    def show(self, source: str, step: str) -> None:
        """Show the code of ``step`` in module ``source`` (a frame's ``source`` and ``label``)."""
        height = max(4, self.size.height or 12)
        width = self.content_region.width or None
        theme = "ansi_dark" if self.app.current_theme.dark else "ansi_light"
        if (source, step, height, width, theme) != self._where:
            self._where = (source, step, height, width, theme)
            self.update(code_view(source, step, height, theme, width))

    def on_mount(self) -> None:
        # a light theme needs the light syntax colours: redraw when the theme changes
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.on_resize())

    def on_resize(self) -> None:
        if self._where is not None:
            self.show(*self._where[:2])
