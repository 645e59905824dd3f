"""Issue 31's first "done when": a toy engine with an option (``window``: a flag, a script
operation), a node field of its own (``depth``), an operation of its own (``slide``) and a
hook in the scheduler loop, registered here, runs through ``run``, ``export``, the sandbox,
``simulate`` and the scheduler form. Its files are the four tests/toy_window*.py (the cache
and spec, its views, its script operation, its simulation hook); radixviz names none of it.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from radixviz.cache.engines import register, unregister
from radixviz.settings import SimSettings
from radixviz.tui.app import RadixvizApp

import toy_window
from radixviz.script.narrate import describe
from tui_helpers import narration, pane_rows, stepper, wait_until

TESTS = Path(__file__).parent
# the lock holds "abcdef" whole through the first slide; the second drops its tail past 2
SCRIPT = 'window 2; insert "abcdef"; insert "abxy"; lock "abcdef"; slide; unlock "abcdef"; slide'


@pytest.fixture(autouse=True)
def toyw():
    register(toy_window.SPEC)   # the one registry line
    yield
    unregister("toyw")


@pytest.fixture
def run(cli):
    return cli.bound("run", "--device", "cpu", "--pool-size", "16", "--width", "100")


def test_the_toy_is_these_four_files_and_radixviz_names_none_of_them():
    assert sorted(p.name for p in TESTS.glob("toy_window*.py")) == [
        "toy_window.py", "toy_window_ops.py", "toy_window_sim.py", "toy_window_views.py"]
    spec = toy_window.SPEC
    assert (spec.views, spec.script, spec.sim, spec.ops) == (
        "toy_window_views", "toy_window_ops", "toy_window_sim", ("slide",))
    package = TESTS.parent / "radixviz"
    naming = [str(p.relative_to(package)) for p in package.rglob("*.py")
              if "toyw" in (text := p.read_text(encoding="utf-8")) or "toy_window" in text]
    assert naming == []


class TestRun:
    def test_slide_keeps_what_a_lock_holds_and_drops_the_rest_past_the_window(self, run):
        code, out, err = run("--engine", "toyw", "--window", "4", "--json", "-e", SCRIPT)
        doc = json.loads(out)
        assert (code, err) == (0, "") and doc["window"] == 2     # the script's window 2 won over --window 4
        first, second = doc["ops"][4]["result"], doc["ops"][6]["result"]
        assert (first["window"], first["dropped"], len(first["freed_slots"])) == (2, 2, 2)   # x, y
        assert second["dropped"] == 4                              # c, d, e, f once unlocked
        (a,) = doc["tree"]["children"]
        assert (a["key"], a["depth"], [(b["key"], b["depth"], b["children"]) for b in a["children"]]) == (
            "a", 1, [("b", 2, [])])

    def test_the_flag_sets_the_window_slide_trims_to(self, run):
        code, out, _ = run("--engine", "toyw", "--window", "3", "-e", 'insert "abcde"; slide')
        assert code == 0
        assert "  2  slide  →  dropped 2 token(s) deeper than 3 (slots 3–4)" in out
        assert "'c'  slots 2  ref 0  t 1  depth 3" in out and "depth 4" not in out
        assert "† evicted 'd'" in out     # the tree marks the subtree the slide took

    @pytest.mark.parametrize("argv, message", [
        (("--engine", "toyw", "--window", "0", "-e", "slide"), "argument --window: must be between 1 and 64, not 0"),
        (("--engine", "toyw", "-e", "window 99"), "window must be between 1 and 64, not 99"),
        (("--engine", "2026", "-e", 'insert "ab"; slide'),
         "slide belongs to the toyw engine: start with 'engine toyw'"),
        (("--engine", "toyw", "-e", "slide 3"), "slide takes no number"),
        (("--engine", "toyw", "-e", "slide 1 2"), "extra argument '2'"),
    ])
    def test_refusals_are_one_line_and_exit_2(self, run, argv, message):
        code, _, err = run(*argv)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_export_draws_the_depth_and_the_slide(cli, tmp_path):
    target = tmp_path / "toy.dot"
    code, _, err = cli("export", "--device", "cpu", "--pool-size", "16", "--engine", "toyw", "--window", "2",
                       "-e", 'insert "abcd"; slide', "-o", target)
    dot = target.read_text(encoding="utf-8")
    assert (code, err) == (0, "")
    assert "depth 2" in dot and "toyw engine, window 2" in dot
    assert "depth 3" not in dot           # c and d slid out


async def test_the_sandbox_takes_the_engine_its_window_and_slide_typed(tmp_path):
    async with stepper(tmp_path, 'insert "zz"\n', size=(120, 36)) as (app, pilot):
        await pilot.press("colon")       # the input stays open for the next line after enter
        for line in ("engine toyw", "window 2", 'insert "abcd"', "slide"):
            await pilot.press(*line, "enter")
        session = app.screen.model.session
        await wait_until(pilot, lambda: len(session.records) == 5, timeout=60)
        assert session.records[-1].result["dropped"] == 2
        await pilot.press("escape", "right_square_bracket")     # to the end of the slide
        await pilot.pause()
        tree = "\n".join(pane_rows(app, "#tree-pane"))          # the painted screen
        assert "toyw, window 2" in tree and "depth 2" in tree and "depth 3" not in tree
        assert "slide returns 2" in narration(app)              # the toy's words for the step shown
        lines = [describe(frame) for frame in session.frames]
        assert any(line.startswith("slide: drop 'c' and what hangs below it, 2 token(s)") for line in lines)


class TestSimulate:
    def _slid(self, cli, window: int) -> dict:
        code, out, _ = cli("simulate", "--engine", "toyw", "--window", window, "--workload", "few-shot",
                           "--requests", "12", "--pool-size", "600", "--json")
        assert code == 0
        return json.loads(out)["stats"]

    def test_the_hook_slides_every_round_by_the_window(self, cli):
        narrow, wide = self._slid(cli, 2), self._slid(cli, 64)
        assert narrow["finished"] == wide["finished"] == 12
        # a narrower window keeps less of every prompt: more slides out, fewer hits
        assert narrow["engine_totals"]["tokens slid out"] > wide["engine_totals"]["tokens slid out"] >= 0
        assert narrow["hit_tokens"] <= wide["hit_tokens"]

    def test_the_text_report_shows_the_hooks_count(self, cli):
        code, out, _ = cli("simulate", "--engine", "toyw", "--window", "4", "--workload", "few-shot",
                           "--requests", "6", "--pool-size", "600")
        assert code == 0 and "tokens slid out" in out and "slides that dropped" in out


class TestSchedulerForm:
    def _app(self, window=3):
        return RadixvizApp("scheduler", scheduler_options={
            "settings": SimSettings("few-shot", "lpm", seed=3, requests=8, pool_size=600), "autorun": False,
            "options": {"engine": "toyw", "engine_options": {"window": window}}})

    async def test_the_window_field_comes_from_the_option_and_the_run_takes_it(self):
        from radixviz.sim import simulate
        from radixviz.tui.screens.scheduler import SchedulerScreen

        app = self._app()
        async with app.run_test(size=(80, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SchedulerScreen))
            field = app.screen.query_one("#sched-option-window")
            assert field.value == "3" and "window" in "\n".join(pane_rows(app, "#sched-form"))
            field.value = "65"
            await pilot.press("enter")
            await pilot.pause()
            assert "window must be between 1 and 64, not 65" in str(app.screen.query_one("#sched-form-error").content)
            field.value = "2"
            app.screen.query_one("#sched-form").submit()
            await wait_until(pilot, lambda: app.screen.timeline is not None, timeout=120)
            result = app.screen.timeline.result
        stats = result.stats
        alone = simulate("few-shot", "lpm", 8, 600, 3, engine="toyw", engine_options={"window": 2}).stats
        assert result.settings["engine"] == "toyw"
        assert stats.engine_totals == alone.engine_totals and stats.engine_totals["tokens slid out"] > 0
        first = simulate("few-shot", "lpm", 8, 600, 3, engine="toyw", engine_options={"window": 3}).stats
        assert first.engine_totals != stats.engine_totals     # the typed 2, not the form's first 3

    def test_simulate_app_opens_it_with_the_engine_and_its_window(self, cli, monkeypatch):
        seen = {}
        monkeypatch.setattr(RadixvizApp, "run", lambda app: seen.update(app.scheduler_options))
        code, _, _ = cli("simulate", "--app", "--engine", "toyw", "--window", "5", "--requests", "8",
                         "--pool-size", "600")
        assert code == 0 and seen["options"]["engine"] == "toyw"
        assert seen["options"]["engine_options"] == {"window": 5}
