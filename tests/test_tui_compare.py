"""The compare view: both matchers on the same operations, stepping together (#7)."""
from __future__ import annotations

from radixviz.tui.app import RadixvizApp, wait_until_ready
from radixviz.tui.screens.compare import CompareScreen
from tui_helpers import plain, stepper


def column(app, name: str) -> str:
    return plain(app.screen.query_one(f"#tree-{name}").content, width=100)


def returned(app, name: str) -> str:
    return plain(app.screen.query_one(f"#result-{name}").content, width=160)


def headline(app) -> str:
    return plain(app.screen.query_one("#compare-status").content, width=160)


async def opened(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, CompareScreen) and app.screen.side is not None


async def test_c_in_the_stepper_compares_at_the_operation_shown(tmp_path):
    async with stepper(tmp_path, size=(140, 40)) as (app, pilot):
        await pilot.press("end", "c")
        await opened(app, pilot)
        assert "op 3/3: match \"Hello_world\"" in headline(app)
        assert "◀ first divergence" in headline(app)
        assert "'Hello_'" in column(app, "fixed") and "✂" in column(app, "fixed")
        assert "'Hello_│L.A.!' 6/11" in column(app, "buggy") and "✗ 'world'" in column(app, "buggy")
        assert "6 token(s)" in returned(app, "fixed") and "11 token(s)" in returned(app, "buggy")
        await pilot.press("left")                         # both step back together
        assert "op 2/3" in headline(app) and "same so far" in headline(app)
        assert "'Hello_L.A.!'" in column(app, "fixed") and "'Hello_L.A.!'" in column(app, "buggy")
        await pilot.press("d")
        assert "op 3/3" in headline(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


async def test_home_opens_the_example_side_by_side(tmp_path):
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until_ready(app, pilot)
        await pilot.press("v")
        await opened(app, pilot)
        assert "◀ first divergence" in headline(app)
