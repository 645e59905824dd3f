"""The code pane: the function that did the current step, that line highlighted.

This is the engine's (or the session's) own source, read with linecache; lines that exist
only to report steps to the viewer are dimmed so the original algorithm stands out.
"""
from __future__ import annotations

import ast
import linecache
from functools import lru_cache
from pathlib import Path

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static


@lru_cache(maxsize=64)
def _functions(file: str) -> tuple:
    """(first line, last line, name) of every function in ``file``, innermost last."""
    source = "".join(linecache.getlines(file))
    if not source:
        return ()
    spans = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            spans.append((first, node.end_lineno, node.name))
    return tuple(sorted(spans))


def function_span(file: str, line: int) -> tuple[int, int, str] | None:
    """The innermost function of ``file`` containing ``line``."""
    best = None
    for first, last, name in _functions(file):
        if first <= line <= last and (best is None or first >= best[0]):
            best = (first, last, name)
    return best


def _trace_lines(file: str) -> frozenset:
    try:
        from radixviz.cache import trace_only_lines
        return trace_only_lines(file)
    except (OSError, SyntaxError):
        return frozenset()


@lru_cache(maxsize=512)
def code_view(file: str, line: int, height: int, theme: str = "ansi_dark"):
    """A renderable of the function around ``line``, at most ``height`` lines tall."""
    span = function_span(file, line)
    lines = linecache.getlines(file)
    if span is None or not lines:
        return Text(f"(no source for {Path(file).name}:{line})", style="dim")
    first, last, name = span
    body = max(3, height - 1)
    if last - first + 1 > body:
        # keep the highlighted line in view, a third of the way down
        first = max(span[0], min(line - body // 3, last - body + 1))
        last = first + body - 1
    # drop the indentation the def itself has (a method's 4 columns): the pane is narrow
    indent = " " * (len(lines[span[0] - 1]) - len(lines[span[0] - 1].lstrip(" ")))
    code = "".join(text[len(indent):] if text.startswith(indent) else text.lstrip(" ")
                   for text in lines[first - 1:last])
    syntax = Syntax(code, "python", theme=theme, line_numbers=True, start_line=first,
                    highlight_lines={line}, word_wrap=False, code_width=None,
                    background_color="default")
    for number in _trace_lines(file):
        if first <= number <= last:
            syntax.stylize_range("dim", (number - first + 1, 0), (number - first + 2, 0))
    header = Text.assemble((f"{Path(file).name}", "bold"), f" · {span[2]}() · line {line}",
                           no_wrap=True, overflow="ellipsis")
    return Group(header, syntax)


class CodePane(Static):
    """Shows the code of the current frame."""

    DEFAULT_CSS = "CodePane { height: 1fr; overflow: hidden hidden; }"

    def __init__(self, **kwargs):
        super().__init__("", **kwargs)
        self._where: tuple | None = None

    def show(self, file: str, line: int) -> None:
        height = max(4, self.size.height or 12)
        if (file, line, height) != self._where:
            self._where = (file, line, height)
            self.update(code_view(file, line, height))

    def on_resize(self) -> None:
        if self._where is not None:
            self.show(*self._where[:2])
