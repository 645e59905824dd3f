"""The step log: one plain-words line per micro-step (text from ``script.narrate.describe``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from radixviz.script import describe

if TYPE_CHECKING:
    from collections.abc import Sequence
    from ..script.frames import Frame

# kind -> style; an operation's line also starts with ▶, so it reads without colour too
KIND_STYLES = {
    "op": "bold", "split": "yellow", "append": "green", "create": "cyan", "delete": "red",
    "free": "red", "skip": "magenta", "ref": "magenta", "result": "bold",
    "matcher": "bold", "reset": "bold", "visit": "dim", "compare": "",
}


def step_line(frame: Frame, *, numbered: bool = True) -> Text:
    """``  12 split after 6 tokens: …`` for one frame; the number is ``frame.number`` (from 1)."""
    line = Text()  # wraps on a narrow screen: a step's words matter more than one line each
    if numbered:
        line.append(f"{frame.number:>4} ", style="dim")
    if frame.kind != "op":
        line.append("  ")
    line.append(describe(frame), style=KIND_STYLES.get(frame.kind, ""))
    return line


def step_log(frames: Sequence[Frame], *, numbered: bool = True) -> Text:
    """All the frames' lines, newline separated."""
    return Text("\n").join(
        step_line(f, numbered=numbered) for f in frames)
