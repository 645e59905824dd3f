"""Many frames as pictures at once, for pages, slides and handouts, in a light or dark theme.

One ``dot`` process draws a whole batch of graphs (``dot`` accepts several graphs in one
input and writes their outputs one after another), so a 200-step export starts a handful
of processes instead of 200. Identical diagrams are drawn once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import os
import re
import shutil
import subprocess

from radixviz.script import describe

from .graphviz import INSTALL_HINT, GraphvizError, matcher_label, to_dot
from .marks import ALL_MARKS

if TYPE_CHECKING:
    from ..script.frames import Frame

THEMES = ("light", "dark")

# The light theme is the Graphviz export's own colours; the dark one swaps each for a
# counterpart that keeps its meaning (blue current, red wrong, ...) on a dark background.
_DARK_MARKS = {
    "current step": ("#58a6ff", "#0c2d6b"),
    "wrongly matched (pre-#7)": ("#ff7b72", "#5d0f12"),
    "just split": ("#e3b341", "#4b3500"),
    "matched": ("#56d364", "#033a16"),
    "new": ("#79c0ff", "#0c2d6b"),
    "locked (ref > 0)": ("#d2a8ff", "#3c1e70"),
    "evicted": ("#8b949e", "#0d1117"),
}
DARK_BACKGROUND, DARK_TEXT = "#0d1117", "#e6edf3"
LIGHT_BACKGROUND = "white"


def _dark_swaps() -> dict:
    swaps = {"white": DARK_BACKGROUND, "#57606a": "#8b949e"}
    for mark in ALL_MARKS:
        color, fill = _DARK_MARKS[mark.name]
        swaps[mark.color] = color
        if mark.fill != "white":
            swaps[mark.fill] = fill
    return swaps


_SWAPS = {"dark": _dark_swaps()}


def themed(dot_text: str, theme: str) -> str:
    """``dot_text`` recoloured for ``theme`` (the light theme is the text as it is)."""
    if theme == "light":
        return dot_text
    for old, new in _SWAPS[theme].items():
        # an attribute value, quoted or not: the graphviz package quotes only what DOT needs
        # (fillcolor=white, color="#57606a")
        dot_text = re.sub(rf'=(?:"{re.escape(old)}"|{re.escape(old)})(?=[\s\]])', f'="{new}"', dot_text)
    head, rest = dot_text.split("\n", 1)
    # defaults set before the export's own: they only fill in what it leaves unset (text, borders)
    defaults = (f'  graph [bgcolor="{DARK_BACKGROUND}", fontcolor="{DARK_TEXT}"];\n'
                f'  node [fontcolor="{DARK_TEXT}", color="{DARK_TEXT}"];\n')
    return f"{head}\n{defaults}{rest}"


def step_number(frame: Frame) -> int:
    """The step's number as the stepper counts: 1 for the first micro-step."""
    return frame.number


def step_caption(frame: Frame, total: int) -> str:
    """``step 5/40: split after 6 tokens ...  ·  fixed matcher``."""
    return f"step {step_number(frame)}/{total}: {describe(frame)}  ·  {matcher_label(frame.tree)}"


def frame_dot(frame: Frame, theme: str = "light", *, title: str | None = None, max_edge: int = 24) -> str:
    """The DOT text of one frame (tree and marks) in ``theme``."""
    return themed(to_dot(frame.tree, frame.marks, title=title, max_edge=max_edge), theme)


def _dot_program() -> str:
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizError(f"the Graphviz 'dot' program is not installed; {INSTALL_HINT}")
    return exe


def render_many(dot_texts: list, fmt: str, *, jobs: int | None = None) -> list:
    """Each DOT text drawn as ``fmt`` (svg or png) bytes, in order; identical texts are drawn once.

    Raises GraphvizError (one line) when ``dot`` is missing or fails.
    """
    if fmt not in _SPLITTERS:
        raise ValueError(f"render_many draws svg or png, not {fmt}")
    unique = list(dict.fromkeys(dot_texts))
    if not unique:
        return []
    exe = _dot_program()
    jobs = max(1, min(jobs or os.cpu_count() or 1, 4, len(unique)))
    size = -(-len(unique) // jobs)
    batches = [unique[i:i + size] for i in range(0, len(unique), size)]
    procs = [subprocess.Popen([exe, f"-T{fmt}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in batches]
    drawn: dict = {}
    try:
        outputs = [proc.communicate("".join(batch).encode("utf-8")) for proc, batch in zip(procs, batches)]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    for proc, batch, (out, err) in zip(procs, batches, outputs):
        pieces = _SPLITTERS[fmt](out)
        if proc.returncode != 0 or len(pieces) != len(batch):
            first = (err.decode("utf-8", "replace").strip().splitlines() or ["no message"])[0]
            raise GraphvizError(f"dot failed on .{fmt} output: {first}")
        drawn.update(zip(batch, pieces))
    return [drawn[text] for text in dot_texts]


def _split_svg(data: bytes) -> list:
    marker = b"<?xml"
    parts = data.split(marker)
    return [marker + part for part in parts[1:]]


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _split_png(data: bytes) -> list:
    """Walk the chunks of each PNG in turn (a signature's bytes may occur inside image data)."""
    pieces, pos = [], 0
    while pos < len(data):
        if data[pos:pos + 8] != _PNG_SIGNATURE:
            break
        start, pos = pos, pos + 8
        while pos + 8 <= len(data):
            length = int.from_bytes(data[pos:pos + 4], "big")
            kind = data[pos + 4:pos + 8]
            pos += 12 + length
            if kind == b"IEND":
                break
        pieces.append(data[start:pos])
    return pieces


_SPLITTERS = {"svg": _split_svg, "png": _split_png}


def inline_svg(svg: bytes) -> str:
    """An SVG document as an element to put inside HTML: no XML prolog, no doctype, no ids
    (Graphviz numbers nodes alike in every diagram, and a page holds many)."""
    text = svg.decode("utf-8")
    text = text[text.index("<svg"):]
    text = re.sub(r'\sid="[^"]*"', "", text)
    return re.sub(r"<!--.*?-->\n?", "", text, flags=re.S)
