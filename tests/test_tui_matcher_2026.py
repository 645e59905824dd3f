"""The ``b`` key (switch the #7 matcher) on today's cache: it says in one line that the 2026
engine has no such matcher and changes nothing; the status line names engine, page size and
eviction policy where the 2024 engine shows its matcher."""
from __future__ import annotations

import pytest

from radixviz.cli import main
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.stepper import NO_MATCHER
from tui_helpers import notifications, status, stepper, tree_text, wait_ready, watch_notifications

NO_MATCHER_2026 = NO_MATCHER.format("2026")


def _sandbox_app(monkeypatch, *argv) -> RadixvizApp:
    """The app ``radixviz sandbox ARGV`` opens (its run() caught, to drive it with Pilot)."""
    opened = {}
    monkeypatch.setattr(RadixvizApp, "run", lambda app: opened.update(app=app))
    with pytest.raises(SystemExit) as exc:
        main(["sandbox", "--device", "cpu", *argv])
    assert exc.value.code == 0
    return opened["app"]


async def test_b_on_a_2026_sandbox_says_there_is_no_matcher_and_changes_nothing(monkeypatch, tmp_path):
    app = _sandbox_app(monkeypatch, "--engine", "2026", "--page-size", "2",
                       "--eviction-policy", "lfu", "--export-dir", str(tmp_path))
    watch_notifications(app)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_ready(app, pilot)
        assert status(app).lstrip().startswith("2026 · page 2 · lfu")   # before any step
        await pilot.press("colon", *'insert "abcdef"', "enter", "escape")
        await pilot.press("end")
        session = app.screen.model.session
        before = (tree_text(app), [r.op.text for r in session.records], session.pool.available_size())
        line = status(app)
        assert "2026 · page 2 · lfu" in line and "matcher" not in line
        await pilot.press("b")
        assert notifications(app)[-1] == NO_MATCHER_2026
        assert "fixed in January 2024" in NO_MATCHER_2026 and "\n" not in NO_MATCHER_2026
        session = app.screen.model.session
        after = (tree_text(app), [r.op.text for r in session.records], session.pool.available_size())
        assert after == before and session.engine.name == "2026"
        assert status(app) == line


async def test_b_on_the_2024_engine_still_switches_the_matcher(tmp_path):
    async with stepper(tmp_path) as (app, pilot):
        await pilot.press("end")
        assert status(app).lstrip().startswith("matcher fixed")
        await pilot.press("b")
        await pilot.press("end")
        assert status(app).lstrip().startswith("matcher BUGGY")
        assert "BUGGY (before #7)" in notifications(app)[-1]


def test_the_html_export_of_a_2026_session_names_engine_page_and_policy(capsys, tmp_path):
    pytest.importorskip("graphviz")
    import shutil
    if shutil.which("dot") is None:
        pytest.skip("Graphviz dot not installed")
    target = tmp_path / "steps.html"
    with pytest.raises(SystemExit) as exc:
        main(["export", "--device", "cpu", "--engine", "2026", "--page-size", "2",
              "--eviction-policy", "slru", "-e", 'insert "abcdef"', "-o", str(target)])
    capsys.readouterr()
    page = target.read_text(encoding="utf-8")
    assert exc.value.code == 0 and "2026 · page 2 · slru" in page and "matcher fixed" not in page
