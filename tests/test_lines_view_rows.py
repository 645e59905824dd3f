"""The lines view's bookkeeping: which rows a step repaints, and the framed rows it keeps."""
from __future__ import annotations

import pytest

from radixviz.tui.widgets.lines_view import _runs
from tui_helpers import stepper


@pytest.mark.parametrize(("rows", "runs"), [([], []), ([3], [(3, 1)]),
                                            ([1, 2, 3, 7, 9, 10], [(1, 3), (7, 1), (9, 2)])])
def test_changed_rows_are_repainted_as_runs(rows, runs):
    assert _runs(rows) == runs


async def test_a_code_line_shown_again_is_painted_from_the_framed_row_kept(tmp_path):
    """Stepping back to a step shows the same code rows: their framed rows are the ones
    drawn the first time (the same objects), and they read as they did."""
    async with stepper(tmp_path) as (app, pilot):
        code = app.screen.query_one("#code-pane")
        region = code.region.reset_offset
        await pilot.press("right")
        await pilot.pause()
        first = code.render_lines(region)
        await pilot.press("right", "left")
        await pilot.pause()
        code._styles_cache._cache.clear()   # Textual's own per-row cache: draw every row again
        again = code.render_lines(region)
        assert [strip.text for strip in again] == [strip.text for strip in first]
        kept = sum(a is b for a, b in zip(again, first))
        assert kept >= len(first) - 2, f"{kept} of {len(first)} framed rows kept"   # the border rows are Textual's
