"""The code pane's window stays put while the next step's line is in view from it (``top``)."""
from __future__ import annotations

import re

from radixviz.script import Session
from radixviz.tui.widgets.code_pane import code_view

# a long insert: its walk steps (visit, compare) alternate a few lines apart in one function
SCRIPT = 'insert "abcdefgh"\ninsert "abcdefgz"\ninsert "abcdxyzw"\n'


def frames_of(kind: str) -> list:
    session = Session(device="cpu", engine="2024")
    session.run(SCRIPT)
    return [f for f in session.frames if f.kind == kind]


def numbers(view) -> list[int]:
    """The source line numbers the view shows, in order (a wrapped line's rows: once)."""
    return [int(m.group(1)) for line in view.lines[1:] if (m := ROW.match(line.plain))]


def marked(view) -> int:
    return next(int(m.group(1)) for line in view.lines[1:] if (m := ROW.match(line.plain))
                and line.plain.startswith("❱"))


ROW = re.compile(r"[❱ ] *(\d+) ")


def test_a_step_whose_line_is_in_view_keeps_the_window_of_the_step_before():
    visit, compare = frames_of("visit")[-1], frames_of("compare")[-1]
    height = 8   # a window smaller than the function, so recentring would move it
    before = code_view(visit.source, visit.label, height, width=100)
    fresh = code_view(compare.source, compare.label, height, width=100)
    kept = code_view(compare.source, compare.label, height, width=100, top=before.top)
    assert marked(kept) == marked(fresh) != marked(before)
    assert numbers(kept)[0] == numbers(before)[0] == before.top
    assert numbers(fresh)[0] != before.top, "the two steps' own windows differ: nothing is tested"


def test_a_line_out_of_view_from_there_recentres_the_window():
    visit = frames_of("visit")[-1]
    view = code_view(visit.source, visit.label, 8, width=100)
    far = view.top + 200   # not a line of the function at all
    assert numbers(code_view(visit.source, visit.label, 8, width=100, top=far)) == numbers(view)
    below = code_view(visit.source, visit.label, 4, width=100)   # 3 rows: the marked line 1/3 down
    from_above = code_view(visit.source, visit.label, 4, width=100, top=below.top - 10)
    assert numbers(from_above) == numbers(below)   # 10 lines up: the marked line is not in view
