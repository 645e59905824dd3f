"""A lesson or challenge file as Markdown reads it: front matter, fenced blocks, prose.

One reader for both kinds of file: markdown-it-py (CommonMark) with its front-matter plugin
finds the front matter and the fenced blocks, so a block is exactly what any Markdown viewer
draws as one (a fence indented four spaces is code, not a block; a fence in a list item is
one). Every piece keeps its line in the file, for ``FILE:LINE`` messages. The front matter's
fields are ``key: value`` lines (``#`` starts a comment line), read here rather than as YAML
so that each field keeps its line and a mistake is named in words a teacher knows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable


@lru_cache(maxsize=1)
def _parser():
    # markdown-it: loaded when the first file is read, not with every command (0.03-0.05 s
    # of a first paint, bench/first_paint.py); blocks only: inline parsing is off
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin
    return MarkdownIt("commonmark").use(front_matter_plugin).disable("inline")


_FIELD = re.compile(r"^([A-Za-z_]+)\s*:\s*(.*)$")
_NEWLINE = re.compile(r"\r\n|\r|\n")   # the line breaks markdown-it counts


class FormatError(ValueError):
    """A mistake at a line of the file (1-based); the caller names the file."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line, self.message = line, message


@dataclass(frozen=True)
class Fence:
    """A fenced block: its kind (the first word after the marks), its body and where it is."""
    kind: str          # "radixviz", "predict", "goal", "python", or "" when none is given
    marks: str         # the opening marks, "```" or "~~~~"
    body: str          # the lines inside, without a list item's or quote's indentation
    line: int          # file line of the opening marks; the body starts on the next
    end: int           # file line of the closing marks (the last line when unclosed)
    closed: bool

    @property
    def body_lines(self) -> list[str]:
        return self.body.split("\n") if self.body else []


@dataclass(frozen=True)
class Prose:
    """Lines between blocks (other languages' fences included), from file line ``line``."""
    lines: tuple
    line: int


class MarkdownFile:
    """``text`` read once: ``lines``, the ``fences`` in file order, and where the front
    matter ends (``body_start``: the index of the first line after it, 0 without one)."""

    def __init__(self, text: str) -> None:
        lines = _NEWLINE.split(text)
        if lines and lines[-1] == "" and text:
            lines.pop()                      # a final line break ends the last line
        self.lines = tuple(lines)
        tokens = _parser().parse(text)
        front = next((t for t in tokens if t.type == "front_matter"), None)
        self._front_end = front.map[1] if front is not None and front.map else None
        self.fences = tuple(self._fence(t) for t in tokens if t.type == "fence" and t.map)

    def _fence(self, token) -> Fence:
        start, end = token.map
        body = token.content[:-1] if token.content.endswith("\n") else token.content
        last = self.lines[end - 1].lstrip(" \t>") if end - 1 > start else ""
        marks = token.markup
        closed = bool(last.strip()) and set(last.strip()) == {marks[0]} and len(last.strip()) >= len(marks)
        info = token.info.strip()
        return Fence(info.split()[0] if info else "", marks, body, start + 1, end, closed)

    @property
    def starts_with_front_matter(self) -> bool:
        return bool(self.lines) and self.lines[0].strip() == "---"

    def front_matter(self, keys: tuple) -> tuple[dict, dict, int]:
        """``(fields, file line of each field, body_start)``: the ``key: value`` lines between
        the first line ``---`` and the next, keys lower-cased, values without surrounding
        quotes. FormatError for a field not in ``keys``, one given twice, or no closing ---.
        No front matter: ``({}, {}, 0)``."""
        if not self.starts_with_front_matter:
            return {}, {}, 0
        end = self._front_end if self._front_end is not None else len(self.lines)
        fields: dict = {}
        where: dict = {}
        expected = ", ".join(f"{k}:" for k in keys[:-1]) + f" or {keys[-1]}:"
        for index in range(1, end):
            raw = self.lines[index].strip()
            if index == end - 1 and self._front_end is not None:
                break                         # the closing ---
            if not raw or raw.startswith("#"):
                continue
            field = _FIELD.match(raw)
            if not field or field.group(1).lower() not in keys:
                raise FormatError(index + 1, f"bad front matter line {raw!r}: expected {expected} "
                                  "(or a line --- to end the front matter)")
            key = field.group(1).lower()
            if key in fields:
                raise FormatError(index + 1, f"{key} given twice in the front matter")
            fields[key], where[key] = field.group(2).strip().strip('"'), index + 1
        if self._front_end is None:
            raise FormatError(1, "unclosed front matter: end it with a line ---")
        return fields, where, end

    def pieces(self, start: int, kinds: Iterable[str]) -> list:
        """The file from line index ``start`` on, as Prose and the Fences whose kind is in
        ``kinds``, in order; other fences stay in the prose around them."""
        out: list = []
        at = start
        for fence in self.fences:
            if fence.kind not in kinds or fence.line - 1 < start:
                continue
            if fence.line - 1 > at:
                out.append(Prose(tuple(self.lines[at:fence.line - 1]), at + 1))
            out.append(fence)
            at = fence.end
        if at < len(self.lines):
            out.append(Prose(tuple(self.lines[at:]), at + 1))
        return out

    def unclosed(self) -> Fence | None:
        """The first fence without its closing marks (it runs to the end of the file)."""
        return next((f for f in self.fences if not f.closed), None)


@lru_cache(maxsize=32)
def read_markdown(text: str) -> MarkdownFile:
    """``MarkdownFile(text)``, parsed once: a loader reads each file twice (is it a lesson or
    a challenge? then the file itself)."""
    return MarkdownFile(text)
