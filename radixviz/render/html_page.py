"""One self-contained HTML page that steps through a run like the stepper does.

Every step is a ``<section>`` with the tree (inline SVG from Graphviz), what the step did and
why, the engine line that ran, the pool and the status line. The page needs no network: the
style and script are inline. Steps are numbered from 1, as in the stepper, and the URL
fragment ``#step-N`` opens step N.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import linecache
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from markdown_it import MarkdownIt
from markupsafe import Markup

from radixviz.script import describe, explain, key_text, slot_ranges

from .badge import engine_badge
from .pool import STATES, slot_symbol
from .source_map import function_span, locate, reporting_lines, short_path, strip_marker
from .slides import THEMES, frame_dot, inline_svg, render_many, step_number
from .views import load_views, page_pools

if TYPE_CHECKING:
    from collections.abc import Sequence
    from ..script.frames import Frame

CODE_CONTEXT = 4          # lines of the function shown above and below the line that ran
POOL_ROW = 32             # slots per row of the pool
MAX_DRAWN_POOL = 4096     # larger pools are summed up, not drawn slot by slot in every step

# raw HTML in a lesson is shown as text, never run
_MARKDOWN = MarkdownIt("commonmark", {"html": False})


@dataclass(frozen=True)
class StepNote:
    """What a lesson adds to a step: its prose in force, and the predictions its operation
    block answers (each answer behind a click)."""
    text: str = ""                 # Markdown
    predicts: tuple = ()           # lessons.Predict


@dataclass(frozen=True)
class CodeView:
    """The engine lines around the one that ran: ``(number, text, mark)`` rows, the mark
    ``hi`` for that line, ``dim`` for lines that only report steps, else ''."""
    where: str
    rows: tuple = ()


def build_page(frames: Sequence[Frame], records, *, title: str, theme: str = "light", notes=None,
               max_edge: int = 24) -> str:
    """The whole page as text. ``notes`` maps a frame index to a StepNote.

    Raises GraphvizError when the ``dot`` program is missing or fails."""
    if theme not in THEMES:
        raise ValueError(f"unknown theme {theme!r}: use {' or '.join(THEMES)}")
    notes = notes or {}
    svgs = render_many([frame_dot(f, theme, max_edge=max_edge) for f in frames], "svg")
    total, op_count = len(frames), len(records)
    steps = [_step(frame, svg, records, notes.get(frame.index)) for frame, svg in zip(frames, svgs)]
    return _page_template().render(title=title, theme=theme, total=total, op_count=op_count, steps=steps)


@cache
def _page_template():
    # jinja2: 20 ms to import, paid only by an export (every command imports this module)
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    # autoescaped: a lesson's words, a key or a title are text in the page, never markup
    templates = Environment(loader=FileSystemLoader(Path(__file__).with_name("templates")),
                            autoescape=select_autoescape(default=True), trim_blocks=True,
                            keep_trailing_newline=True)
    return templates.get_template("step_page.html")


def _step(frame: Frame, svg: bytes, records, note) -> dict:
    """What the template shows of one step, in the stepper's order: the step in one line,
    the matcher note, the lesson's words and predictions, the why, the code, pool, status."""
    record = records[frame.op_index] if frame.op_index < len(records) else None
    return {
        "number": step_number(frame),
        "op_start": record is not None and frame.index == record.first_frame,
        "svg": Markup(inline_svg(svg)),       # Graphviz escapes the labels it draws
        "what": describe(frame),
        "diff": _disagreement(record, frame.tree.buggy_match),
        "lesson": Markup(_MARKDOWN.render(note.text)) if note is not None and note.text else None,
        "predicts": note.predicts if note is not None else (),
        "why": explain(frame),
        "code": _code_block(frame.source, frame.label) if frame.source else None,
        "pool": _pool(frame),
        "more_pool": _more_pool(frame),
        "status": _status(frame, records),
    }


def _disagreement(record, buggy_now: bool) -> dict | None:
    """For a match the two matchers answer differently: both counts, the wrong tokens marked."""
    if record is None or record.op.name != "match" or not record.result.get("disagreement"):
        return None
    diff, key = record.result["disagreement"], record.op.key
    if buggy_now:
        head = (f"✗ The fixed matcher (#7) would return {diff['fixed']} token(s); "
                f"this buggy walk returns {diff['buggy']}.")
    else:
        head = f"The buggy matcher (pre-#7) would return {diff['buggy']} token(s) here, not {diff['fixed']}."
    start, end = diff["wrong_from"], max(diff["fixed"], diff["buggy"])

    def part(tokens) -> str:
        return key_text(tokens, limit=10**6)[1:-1]
    return {"head": head, "agreed": part(key[:start]), "wrong": part(key[start:end]), "rest": part(key[end:]),
            "slots": slot_ranges(diff["wrong_slots"])}


@lru_cache(maxsize=1024)
def _code_block(source: str, step: str) -> CodeView:
    """The lines around the one that did ``step``, that line highlighted; the lines that only
    report steps to the viewer left out, as the app's code pane leaves them out (its ``t``
    shows them; a page has no key for that). The lines kept keep their numbers."""
    site = locate(source, step)
    if site.file is None or site.line is None:
        return CodeView(site.where)
    file, line, lines = site.file, site.line, linecache.getlines(site.file)
    first, last = max(1, line - CODE_CONTEXT), min(len(lines), line + CODE_CONTEXT)
    span = function_span(file, line)
    if span is not None:
        first, last = max(first, span[0]), min(last, span[1])
    hidden = reporting_lines(file) - {line}
    rows = tuple((number, strip_marker(lines[number - 1]).rstrip("\n"), "hi" if number == line else "")
                 for number in range(first, last + 1) if number not in hidden)
    where = f"{short_path(file)} · {site.function}() · line {line}" if site.function else \
        f"{short_path(file)} · line {line}"
    return CodeView(where, rows)


def _pool(frame) -> dict:
    """The pool slot by slot: rows of ``POOL_ROW`` slots, each a list of (class, symbols)
    runs; ``rows`` None for a pool too large to draw in every step."""
    pool, touched = frame.pool, set(frame.marks.slots or ())
    shown = {"used": pool.used, "size": pool.size, "touched": len(touched), "rows": None,
             "legend": [(state, symbol, words) for state, (symbol, _style, words) in STATES.items()]}
    if pool.size > MAX_DRAWN_POOL:
        return shown
    rows = []
    for start in range(0, pool.size, POOL_ROW):
        runs: list = []
        for slot in range(start, min(start + POOL_ROW, pool.size)):
            state = pool.state(slot)
            mark = f"p-{state}" + (" p-t" if slot in touched else "")
            symbol = slot_symbol(state, pool.refcounts[slot])
            if runs and runs[-1][0] == mark:
                runs[-1][1] += symbol
            else:
                runs.append([mark, symbol])
        rows.append((start, runs))
    shown["rows"] = rows
    return shown


def _more_pool(frame) -> dict | None:
    """A second pool, as the engine's views draw it on a page (a host pool, a window's), or None."""
    load_views(frame.tree)
    return page_pools(frame.tree, frame, MAX_DRAWN_POOL, POOL_ROW)


def _status(frame: Frame, records) -> dict:
    tree, pool = frame.tree, frame.pool
    text, tone = engine_badge(tree)
    return {"badge": text, "tone": "buggy" if tone == "buggy" else "fixed", "evictable": tree.evictable_size,
            "total_size": tree.total_size, "free": pool.free, "size": pool.size, "number": step_number(frame),
            "op": min(frame.op_index + 1, len(records))}
