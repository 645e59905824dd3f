"""The code pane: the function that did the current step, that line highlighted.

This is the engine's (or the session's) own source: the step's label is found on its line
by render/source_map.py. Lines that only report steps to the viewer are dimmed so the
original algorithm stands out. Without source files the pane names the step instead.
"""
from __future__ import annotations

import linecache
from functools import lru_cache
from pathlib import Path

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static

from radixviz.render.source_map import function_span, locate, reporting_lines, strip_marker


@lru_cache(maxsize=512)
def code_view(source: str, step: str, height: int, theme: str = "ansi_dark"):
    """A renderable of the function around the line of ``step``, at most ``height`` lines tall."""
    site = locate(source, step)
    span = function_span(site.file, site.line) if site.line is not None else None
    if span is None:
        return Text(f"step {step} ({source or 'no source'}: no source file to show)", style="dim")
    file, line = site.file, site.line
    lines = linecache.getlines(file)
    first, last, name = span
    body = max(3, height - 1)
    if last - first + 1 > body:
        # keep the highlighted line in view, a third of the way down
        first = max(span[0], min(line - body // 3, last - body + 1))
        last = first + body - 1
    # drop the indentation the def itself has (a method's 4 columns): the pane is narrow
    indent = " " * (len(lines[span[0] - 1]) - len(lines[span[0] - 1].lstrip(" ")))
    code = "".join(strip_marker(text[len(indent):] if text.startswith(indent) else text.lstrip(" "))
                   for text in lines[first - 1:last])
    syntax = Syntax(code, "python", theme=theme, line_numbers=True, start_line=first,
                    highlight_lines={line}, word_wrap=False, code_width=None,
                    background_color="default")
    for number in reporting_lines(file):
        if first <= number <= last:
            syntax.stylize_range("dim", (number - first + 1, 0), (number - first + 2, 0))
    header = Text.assemble((f"{Path(file).name}", "bold"), f" · {name}() · line {line}",
                           no_wrap=True, overflow="ellipsis")
    return Group(header, syntax)


class CodePane(Static):
    """Shows the code of the current frame."""

    DEFAULT_CSS = "CodePane { height: 1fr; overflow: hidden hidden; }"

    def __init__(self, **kwargs):
        super().__init__("", **kwargs)
        self._where: tuple | None = None

    def show(self, source: str, step: str) -> None:
        """Show the code of ``step`` in module ``source`` (a frame's ``source`` and ``label``)."""
        height = max(4, self.size.height or 12)
        if (source, step, height) != self._where:
            self._where = (source, step, height)
            self.update(code_view(source, step, height))

    def on_resize(self) -> None:
        if self._where is not None:
            self.show(*self._where[:2])
