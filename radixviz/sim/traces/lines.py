"""Reading a trace one line at a time: JSON objects with their line numbers, and checks.

Every reader here is a generator over the open file, so a file of any size is read in one
pass and only the line in hand is in memory. An error is ``TraceError("FILE:LINE: why")``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from radixviz.files import ReadError, open_stream
from radixviz.sim.trace import MAX_ID, MAX_LINE_CHARS, TraceError


def json_lines(path: Path):
    """``(line number, where, object)`` for each non-blank line of ``path``."""
    for number, where, line in text_lines(path):
        yield number, where, parse_object(line, where)


def text_lines(path: Path):
    """``(line number, where, line)`` for each non-blank line of ``path``, its length checked."""
    try:
        handle = open_stream(path)
    except ReadError as error:
        raise TraceError(f"{path}: cannot read the trace: {error}") from None
    with handle:
        try:
            # at most one character past the limit is read of a line: a 2 GB line is refused
            # after 1 MB, never held whole
            lines = iter(lambda: handle.readline(MAX_LINE_CHARS + 1), "")
            for number, line in enumerate(lines, 1):
                if len(line) > MAX_LINE_CHARS:
                    raise TraceError(f"{path}:{number}: line too long (over {MAX_LINE_CHARS:,} characters)")
                if not line.strip():
                    continue
                yield number, f"{path}:{number}", line
        except UnicodeDecodeError:
            raise TraceError(f"{path}: not UTF-8 text (a binary file?)") from None


def count_lines(path: Path) -> int:
    """Non-blank lines, counted a megabyte at a time (a line of any length is never held)."""
    count, content = 0, False       # content: the line in hand has a non-blank byte so far
    with open_stream(path, binary=True) as handle:
        while chunk := handle.read(1 << 20):
            parts = chunk.split(b"\n")
            for part in parts[:-1]:
                count += content or bool(part.strip())
                content = False
            content = content or bool(parts[-1].strip())
    return count + content


def parse_object(line: str, where: str) -> dict:
    if len(line) > MAX_LINE_CHARS:
        raise TraceError(f"{where}: line too long ({len(line):,} characters; at most {MAX_LINE_CHARS:,})")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as error:
        raise TraceError(f"{where}: not JSON: {error.msg} (column {error.colno})") from None
    except (RecursionError, ValueError):
        raise TraceError(f"{where}: not a request: JSON nested too deeply or a number too long") from None
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: each line must be a JSON object")
    return obj


def whole(obj: dict, name: str, where: str, low: int = 0, default=None) -> int:
    """``obj[name]`` as a whole number from ``low`` (``default`` when absent, if given)."""
    if name not in obj and default is not None:
        return default
    if name not in obj:
        raise TraceError(f"{where}: missing {name!r}")
    value = obj[name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_ID:
        raise TraceError(f"{where}: {name} must be a whole number from {low}, not {shown(value)}")
    return value


def time_of(obj: dict, names, where: str):
    """The first of ``names`` present, as a finite number; None if none is there."""
    for name in names:
        if name in obj:
            value = obj[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise TraceError(f"{where}: {name} must be a finite number, not {shown(value)}")
            return value
    return None


def shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:23] + "…"


# the last pass the clock can name: passes are counted exactly in a float's 53 bits
MAX_PASS = 2**53


class Clock:
    """Trace times -> scheduler passes: ``ms_per_pass`` of trace time is one pass, counted
    from the first request's time. Times must not go backwards (a stream cannot sort), nor
    lie further from the first than ``MAX_PASS`` passes (TraceError naming the line)."""

    def __init__(self, ms_per_pass: float | None, unit_ms: float):
        self.ms_per_pass, self.unit_ms = ms_per_pass, unit_ms
        self.start = self.last = None

    def pass_of(self, time, where: str):
        if self.ms_per_pass is None or time is None:
            return None
        if self.start is None:
            self.start = self.last = time
        if time < self.last:
            raise TraceError(f"{where}: time {shown(time)} is before the line above's "
                             f"({shown(self.last)}): a streamed trace must be sorted by time")
        passes = (time - self.start) * self.unit_ms / self.ms_per_pass
        if not passes < MAX_PASS:    # also inf and NaN: two huge times of opposite signs
            raise TraceError(f"{where}: time {shown(time)} is too far from the first line's "
                             f"({shown(self.start)}): the clock counts at most 2**53 passes of "
                             f"{self.ms_per_pass:g} ms")
        self.last = time
        return int((time - self.start) * self.unit_ms // self.ms_per_pass)
