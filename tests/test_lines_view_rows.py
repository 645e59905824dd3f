"""The lines view's bookkeeping: which rows a step repaints, and the framed rows it keeps."""
from __future__ import annotations

import pytest

from radixviz.tui.widgets.lines_view import _runs
from tui_helpers import stepper, wait_until


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


async def test_the_next_step_is_built_while_the_learner_reads_this_one(tmp_path, monkeypatch):
    """Once a step has painted, the next one's rows are built in idle time: the step that
    follows builds no pool rows and no narration of its own (what is built once it has
    painted is for the step after it)."""
    import radixviz.tui.widgets.narration as narration
    import radixviz.tui.widgets.pool_pane as pool_pane
    built: list = []   # (what, the pool or frame it was built for)
    for module, name in ((pool_pane, "pool_lines"), (narration, "narration_parts")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda first, *rest, _real=real, _name=name:
                            built.append((_name, first)) or _real(first, *rest))
    async with stepper(tmp_path) as (app, pilot):
        await pilot.press("right")
        await wait_until(pilot, lambda: app.screen._prefetch is None)   # the prefetch timer has run
        built.clear()
        await pilot.press("right")
        shown = app.screen.model.frame
        assert app.screen.model.position == 2
        assert [name for name, what in built if what is shown or what is shown.pool] == [], built
        assert {name for name, _ in built} == {"pool_lines", "narration_parts"}   # the next step's, ahead

