"""One self-contained HTML page that steps through a run like the stepper does.

Every step is a ``<section>`` with the tree (inline SVG from Graphviz), what the step did and
why, the engine line that ran, the pool and the status line. The page needs no network: the
style and script are inline. Steps are numbered from 1, as in the stepper, and the URL
fragment ``#step-N`` opens step N.
"""
from __future__ import annotations

import html
import linecache
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt

from radixviz.script import describe, explain, key_text, slot_ranges

from .badge import engine_badge
from .html_assets import SCRIPT, STYLE
from .pool import STATES, slot_symbol
from .source_map import function_span, locate, reporting_lines, short_path, strip_marker
from .slides import THEMES, frame_dot, inline_svg, render_many, step_number

CODE_CONTEXT = 4          # lines of the function shown above and below the line that ran
POOL_ROW = 32             # slots per row of the pool
MAX_DRAWN_POOL = 4096     # larger pools are summed up, not drawn slot by slot in every step


@dataclass(frozen=True)
class StepNote:
    """What a lesson adds to a step: its prose in force, and the predictions its operation
    block answers (each answer behind a click)."""
    text: str = ""                 # Markdown
    predicts: tuple = ()           # lessons.Predict


def build_page(frames, records, *, title: str, theme: str = "light", notes=None,
               max_edge: int = 24) -> str:
    """The whole page as text. ``notes`` maps a frame index to a StepNote.

    Raises GraphvizError when the ``dot`` program is missing or fails."""
    if theme not in THEMES:
        raise ValueError(f"unknown theme {theme!r}: use {' or '.join(THEMES)}")
    notes = notes or {}
    svgs = render_many([frame_dot(f, theme, max_edge=max_edge) for f in frames], "svg")
    total, op_count = len(frames), len(records)
    sections = [_section(frame, svg, records, total, op_count, notes.get(frame.index))
                for frame, svg in zip(frames, svgs)]
    esc = html.escape
    return "".join([
        f'<!DOCTYPE html>\n<html lang="en" class="theme-{theme}">\n<head>\n<meta charset="utf-8">\n',
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
        f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        '<header class="bar">\n',
        f"<h1>{esc(title)}</h1>\n",
        '<div class="controls">',
        '<button id="prev" type="button" title="previous step (←)">←</button>',
        f'<input id="slider" type="range" min="1" max="{max(total, 1)}" value="1" aria-label="step">',
        '<button id="next" type="button" title="next step (→)">→</button>',
        f'<span class="counter">step <span id="step-number">1</span> of {total}</span>',
        "</div>\n",
        '<span class="hint">→ ← step · [ ] operation · Home End</span>\n',
        "</header>\n<main>\n",
        "".join(sections),
        "</main>\n",
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n",
    ])


def _section(frame, svg: bytes, records, total: int, op_count: int, note) -> str:
    number = step_number(frame)
    record = records[frame.op_index] if frame.op_index < len(records) else None
    op_start = record is not None and frame.index == record.first_frame
    esc = html.escape
    # the stepper's order: the step in one line, the matcher note, the lesson's words, the why
    side = [f'<div class="what">{esc(describe(frame))}</div>']
    diff = _disagreement(record, frame.tree.buggy_match)
    if diff:
        side.append(diff)
    if note is not None and note.text:
        side.append(f'<div class="lesson">{_markdown(note.text)}</div>')
    if note is not None:
        side.extend(_predict(block) for block in note.predicts)
    why = explain(frame)
    if why:
        side.append(f'<div class="why">{esc(why)}</div>')
    side.append(_code(frame))
    side.append(f'<div><h2>KV pool</h2>{_pool(frame)}</div>')
    side.append(_status(frame, total, op_count))
    return (f'<section class="step" id="s{number}" data-step="{number}" data-op-start="{int(op_start)}" '
            f'aria-label="step {number} of {total}">\n'
            f'<figure class="tree">{inline_svg(svg)}</figure>\n'
            f'<div class="side">{"".join(side)}</div>\n</section>\n')


def _markdown(text: str) -> str:
    # raw HTML in a lesson is shown as text, never run
    return MarkdownIt("commonmark", {"html": False}).render(text)


def _predict(block) -> str:
    esc = html.escape
    choices = ""
    if block.choices:
        items = "".join(f"<li>{esc(str(c))}</li>" for c in block.choices)
        choices = f'<ol type="a">{items}</ol>'
    answer = f"<p><b>Answer: {esc(str(block.answer))}</b></p>"
    if block.explain:
        answer += f"<p>{esc(block.explain)}</p>"
    return (f'<div class="predict"><div class="q">Predict: {esc(block.question)}</div>{choices}'
            f'<details><summary>Show the answer</summary>{answer}</details></div>')


def _disagreement(record, buggy_now: bool) -> str:
    """For a match the two matchers answer differently: both counts, the wrong tokens marked."""
    if record is None or record.op.name != "match" or not record.result.get("disagreement"):
        return ""
    diff, key = record.result["disagreement"], record.op.key
    if buggy_now:
        head = (f"✗ The fixed matcher (#7) would return {diff['fixed']} token(s); "
                f"this buggy walk returns {diff['buggy']}.")
    else:
        head = f"The buggy matcher (pre-#7) would return {diff['buggy']} token(s) here, not {diff['fixed']}."
    start, end = diff["wrong_from"], max(diff["fixed"], diff["buggy"])

    def part(tokens):
        return html.escape(key_text(tokens, limit=10**6)[1:-1])
    return (f'<div class="diff"><b>{html.escape(head)}</b> Key: <code><span class="ok">{part(key[:start])}</span>'
            f'<span class="wrong">⟦{part(key[start:end])}⟧</span>{part(key[end:])}</code> '
            f"⟦…⟧ slots {html.escape(slot_ranges(diff['wrong_slots']))} belong to another request.</div>")


@lru_cache(maxsize=1024)
def _code_block(source: str, step: str) -> str:
    """The lines around the one that did ``step``, that line highlighted; lines that only
    report steps dimmed, as in the app's code pane."""
    site = locate(source, step)
    if site.file is None or site.line is None:
        return f'<div><h2>engine line</h2><div class="where">{html.escape(site.where)}</div></div>'
    file, line, lines = site.file, site.line, linecache.getlines(site.file)
    first, last = max(1, line - CODE_CONTEXT), min(len(lines), line + CODE_CONTEXT)
    span = function_span(file, line)
    if span is not None:
        first, last = max(first, span[0]), min(last, span[1])
    dim = reporting_lines(file)
    rows = []
    for number in range(first, last + 1):
        text = html.escape(strip_marker(lines[number - 1]).rstrip("\n"))
        cls = "hi" if number == line else ("dim" if number in dim else "")
        row = f'<span class="ln">{number:>4} </span>{text}'
        rows.append(f'<span class="{cls}">{row}</span>' if cls else row)
    where = f"{short_path(file)} · {site.function}() · line {line}" if site.function else \
        f"{short_path(file)} · line {line}"
    return (f'<div><h2>engine line</h2><div class="where">{html.escape(where)}</div>'
            f'<pre class="code">{chr(10).join(rows)}</pre></div>')


def _code(frame) -> str:
    return _code_block(frame.source, frame.label) if frame.source else ""


def _pool(frame) -> str:
    pool, touched = frame.pool, set(frame.marks.slots or ())
    if pool.size > MAX_DRAWN_POOL:
        return (f'<div class="where">{pool.used}/{pool.size} used, {len(touched)} touched by this step '
                f"(a pool this large is not drawn slot by slot)</div>")
    rows = []
    for start in range(0, pool.size, POOL_ROW):
        cells, run_class, run = [], None, []
        for slot in range(start, min(start + POOL_ROW, pool.size)):
            state = pool.state(slot)
            cls = f"p-{state}" + (" p-t" if slot in touched else "")
            if cls != run_class and run:
                cells.append(f'<span class="{run_class}">{"".join(run)}</span>')
                run = []
            run_class = cls
            run.append(slot_symbol(state, pool.refcounts[slot]))
        if run:
            cells.append(f'<span class="{run_class}">{"".join(run)}</span>')
        rows.append(f'<span class="ln">{start:>4}│</span>{"".join(cells)}')
    legend = " ".join(f'<span class="p-{state}">{symbol} {words}</span>'
                       for state, (symbol, _style, words) in STATES.items())
    legend += '  <span class="p-t">touched</span>'
    return (f'<pre class="pool">{chr(10).join(rows)}</pre>'
            f'<div class="where">{pool.used}/{pool.size} used — {legend}</div>')


def _status(frame, total: int, op_count: int) -> str:
    tree, pool = frame.tree, frame.pool
    text, tone = engine_badge(tree)
    badge = f'<span class="badge {"buggy" if tone == "buggy" else "fixed"}">{html.escape(text)}</span>'
    op = min(frame.op_index + 1, op_count)
    return (f'<div class="status">{badge} evictable {tree.evictable_size} · total {tree.total_size} · '
            f"free {pool.free}/{pool.size} · step {step_number(frame)}/{total} · op {op}/{op_count}</div>")
