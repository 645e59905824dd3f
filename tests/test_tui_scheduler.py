"""The scheduler screen: the settings form, stepping batch by batch, what each pane says.

Every expectation is checked against a separate run of ``radixviz.sim.simulate`` with the
same settings, so the screen is tested for showing the scheduler's real decisions.
"""
from __future__ import annotations

import random
import subprocess
import sys
from contextlib import asynccontextmanager

import pytest

from radixviz.cli import main
from radixviz.sim import simulate
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.home import HomeScreen
from radixviz.tui.screens.scheduler import SchedulerScreen
from radixviz.tui.widgets.scheduler_form import SimSettings, check_settings

SMALL = SimSettings("few-shot", "lpm", seed=3, requests=12, pool_size=768)
SIZE = (80, 24)
MARKS = {"fits": "✓", "does not fit": "✗", "does not fit once its prefix is locked": "↶",
         "prefill token cap reached": "≥"}


def _app(settings=SMALL, autorun=True) -> RadixvizApp:
    return RadixvizApp("scheduler", scheduler_options={"settings": settings, "autorun": autorun})


async def _settle(pilot) -> None:
    """Until no run is pending or computing, and the screen has drawn the result."""
    for _ in range(500):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if not (isinstance(pilot.app.screen, SchedulerScreen) and pilot.app.screen.busy):
            break
    await pilot.pause()


@asynccontextmanager
async def scheduler(settings=SMALL, autorun=True, size=SIZE):
    app = _app(settings, autorun)
    async with app.run_test(size=size) as pilot:
        await _settle(pilot)
        yield app, pilot


@pytest.fixture(scope="module")
def reference():
    """The same run, straight from the simulation."""
    s = SMALL
    return simulate(s.workload, s.policy, s.requests, s.pool_size, s.seed, record=True)


def text(app, selector: str) -> str:
    return str(app.screen.query_one(selector).content)


def lines(app, pane: str) -> list[str]:
    return [line.plain for line in app.screen.query_one(f"#sched-{pane}").lines]


async def test_steps_batch_by_batch(reference):
    total = len(reference.records)
    async with scheduler() as (app, pilot):
        assert isinstance(app.screen, SchedulerScreen)
        assert f"batch 1/{total} prefill" in text(app, "#sched-status")
        await pilot.press("right")
        assert f"batch 2/{total}" in text(app, "#sched-status")
        await pilot.press("right", "n", "space")
        assert f"batch 5/{total}" in text(app, "#sched-status")
        await pilot.press("left", "p")
        assert f"batch 3/{total}" in text(app, "#sched-status")
        await pilot.press("end")
        assert f"batch {total}/{total}" in text(app, "#sched-status")
        await pilot.press("right")   # past the end: stays
        assert f"batch {total}/{total}" in text(app, "#sched-status")
        await pilot.press("home", "left")
        assert f"batch 1/{total}" in text(app, "#sched-status")


async def test_admitted_requests_and_the_arithmetic(reference):
    first = reference.records[0]
    assert first.kind == "prefill" and first.admitted
    async with scheduler() as (app, _pilot):
        running = lines(app, "running")
        for rid in first.admitted:
            assert any(line.split()[:2] == ["+", f"#{rid}"] for line in running), running
        queue = lines(app, "queue")
        for d in first.decisions:
            row = next(line for line in queue if line.split()[1:2] == [f"#{d.rid}"])
            mark, _, hit, need, room, delta = row.split()[:6]
            assert mark == MARKS[d.reason]
            assert (int(hit), int(need), float(room), int(delta)) == (
                d.prefix_len, d.need, round(d.available, 1), d.lock_delta)
            assert (mark == "✓") == d.admitted


async def test_next_round_and_later_hits(reference):
    rounds = [r for r in reference.records if r.kind == "prefill" or r.decisions]
    async with scheduler(size=(120, 40)) as (app, pilot):
        await pilot.press("right_square_bracket")
        second = rounds[1]
        assert f"batch {second.index + 1}/" in text(app, "#sched-status")
        # a later round reuses what finished requests left in the tree
        hit_round = next(r for r in rounds if r.hit_tokens)
        app.screen.timeline.go(hit_round.index)
        app.screen.refresh_view()
        await pilot.pause()
        queue = lines(app, "queue")
        hits = {int(row[2]) for row in map(str.split, queue) if row[1:2] and row[1][0] == "#"}
        assert max(hits) == max(d.prefix_len for d in hit_round.decisions) > 0
        assert "root" in lines(app, "tree")[0]
        assert any("free" in line for line in lines(app, "pool"))


async def test_summary_at_the_end_matches_the_run(reference):
    stats = reference.stats
    async with scheduler() as (app, pilot):
        await pilot.press("end")
        summary = text(app, "#sched-summary")
        assert f"hit {stats.hit_rate:.1%}" in summary
        assert f"reused {stats.hit_tokens:,}" in summary
        computed = stats.prefill_computed + stats.decode_computed
        assert f"computed {computed:,}" in summary
        assert f"evicted {stats.evicted_tokens:,}" in summary
        assert f"✔{stats.finished}" in summary


async def test_whole_run_line_gives_the_optimum_and_ttft(reference):
    """The policy's share of the optimum and its TTFT p95, as the run computed them."""
    optimum, ttft = reference.traffic["optimum"], reference.traffic["latency"]["ttft_passes"]
    assert 0 < optimum["share_of_optimal"] < 1   # lpm on this tight pool falls short
    async with scheduler() as (app, pilot):
        for _ in range(2):   # the same whatever batch is shown
            line = text(app, "#sched-run")
            assert line.startswith(" whole run, lpm:")
            assert (f"{optimum['share_of_optimal']:.1%} of the best "
                    f"{optimum['optimal_hit_rate']:.1%}") in line
            assert f"TTFT p95 {ttft['p95']} passes" in line
            await pilot.press("end")


async def test_form_refuses_bad_input_inline():
    async with scheduler(autorun=False) as (app, pilot):
        screen = app.screen
        await pilot.press("right", "tab", "left")   # cycle the workload and the policy
        await pilot.press("tab", *"abc", "enter")   # then the seed
        await _settle(pilot)
        error = text(app, "#sched-form-error")
        assert "seed must be a whole number, not 'abc'" in error
        assert screen.timeline is None and screen.form_open
        assert app.screen.query_one("#sched-seed").value == "abc"   # nothing typed is lost
        await pilot.press("backspace", "backspace", "backspace", "1", "tab", "0", "enter")
        await _settle(pilot)
        assert "requests must be between 1 and 500, not 0" in text(app, "#sched-form-error")
        assert screen.timeline is None
        await pilot.press("backspace", "6", "enter")
        await _settle(pilot)
        assert not screen.form_open and screen.timeline is not None
        assert screen.timeline.workload == "multi-turn"
        assert screen.timeline.settings["policy"] == "weight"
        assert screen.timeline.settings["seed"] == 1 and screen.timeline.settings["requests"] == 6


async def test_a_served_session_keeps_the_run_within_its_memory_budget(monkeypatch):
    # a served app (radixviz serve) with the smallest budget: 65 requests at most (issue 53)
    monkeypatch.setenv("RADIXVIZ_SERVED", "1")
    monkeypatch.setenv("RADIXVIZ_SESSION_MB", "1024")
    async with scheduler(autorun=False) as (app, pilot):
        screen = app.screen
        await pilot.press("tab", "tab", "tab", "ctrl+a", "ctrl+k", *"300", "enter")   # the requests
        await _settle(pilot)
        assert "requests 300: the scheduler here keeps at most 65" in text(app, "#sched-form-error")
        assert screen.timeline is None and screen.form_open


async def test_a_run_where_nothing_fits_is_refused_inline():
    tiny_pool = SimSettings("few-shot", "fcfs", seed=0, requests=3, pool_size=16)
    async with scheduler(tiny_pool) as (app, _pilot):
        assert app.screen.form_open and app.screen.timeline is None
        assert "no batch ran: all 3 requests were refused" in text(app, "#sched-form-error")


async def test_settings_rerun_and_back():
    async with scheduler() as (app, pilot):
        screen = app.screen
        await pilot.press("right", "s")
        assert screen.form_open
        await pilot.press("escape")   # closes the form over the run, nothing lost
        assert not screen.form_open and screen.timeline.index == 1
        await pilot.press("q")
    assert app.return_code == 0


async def test_opened_from_home_and_escape_goes_back(tmp_path):
    app = RadixvizApp("home", lesson_dirs=[tmp_path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, SchedulerScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)


async def test_leaving_while_a_run_computes(tmp_path):
    app = RadixvizApp("home", lesson_dirs=[tmp_path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("w")
        await pilot.pause()
        await pilot.press("enter")   # runs the default settings
        await pilot.press("escape")  # and leaves before they are shown
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen) and app.is_running
        await pilot.press("w")       # a fresh screen works as before
        await pilot.pause()
        await pilot.press("enter")
        await _settle(pilot)
        assert app.screen.timeline is not None and not app.screen.form_open


async def test_random_keys_never_crash():
    keys = ["right", "left", "home", "end", "n", "p", "space", "right_square_bracket",
            "left_square_bracket", "g", "pageup", "pagedown", "s", "tab", "shift+tab", "enter",
            "up", "down", "1", "x", "backspace", "question_mark"]
    rng = random.Random(7)
    async with scheduler(SimSettings("shared-prompt", "weight", 1, 8, 512)) as (app, pilot):
        for _ in range(120):
            await pilot.press(rng.choice(keys))
        await _settle(pilot)
        assert app.is_running
    assert app.return_code in (0, None)


def test_check_settings_limits():
    assert check_settings("few-shot", "lpm", "0", "32", "1024") == (SimSettings(), None)
    assert check_settings("nope", "lpm", 0, 1, 16)[1].startswith("workload: choose from")
    assert "pool size must be between 16 and 8192" in check_settings("few-shot", "lpm", 0, 1, 9)[1]


FIRST_PAINT = """
import asyncio
from radixviz.tui.app import RadixvizApp
from radixviz.tui.widgets.scheduler_form import SimSettings

async def main():
    app = RadixvizApp("scheduler", scheduler_options={"settings": SimSettings(requests=4),
                                                      "autorun": True})
    async with app.run_test(size=(80, 24)) as pilot:
        while app.screen.busy:
            await app.workers.wait_for_complete()
            await pilot.pause()
        print(app.torch_at_first_paint, app.screen.timeline is not None)

asyncio.run(main())
"""


def test_first_paint_does_not_wait_for_torch():
    # a fresh interpreter: this one imported torch long ago
    done = subprocess.run([sys.executable, "-c", FIRST_PAINT], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.split() == ["False", "True"], done.stderr[-2000:]


def _cli(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--app", *argv])
    return exc.value.code, capsys.readouterr().err


def test_simulate_app_opens_the_screen_on_those_settings(monkeypatch, capsys):
    seen = {}
    monkeypatch.setattr(RadixvizApp, "run", lambda app: seen.update(
        start=app.start, **app.scheduler_options))
    code, _ = _cli(capsys, "--workload", "tree-of-thought", "--policy", "weight",
                   "--requests", "9", "--pool-size", "600", "--seed", "4")
    assert code == 0 and seen["start"] == "scheduler" and seen["autorun"]
    assert seen["settings"] == SimSettings("tree-of-thought", "weight", 4, 9, 600)


@pytest.mark.parametrize("argv, message", [
    (("--json",), "--app shows one policy at a time"),
    (("--compare", "lpm,fcfs"), "--app shows one policy at a time"),
    (("--requests", "501"), "--app: requests must be between 1 and 500, not 501"),
    (("--pool-size", "9000"), "--app: pool size must be between 16 and 8192, not 9000"),
])
def test_simulate_app_refuses_bad_input_in_one_line(capsys, argv, message):
    code, err = _cli(capsys, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_snapshot_mid_run(snap_compare):
    async def run_before(pilot):
        await _settle(pilot)
        pilot.app.screen.timeline.go(12)
        pilot.app.screen.refresh_view()
        await pilot.pause()
    assert snap_compare(_app(), terminal_size=SIZE, run_before=run_before)


async def test_stepping_keys_before_any_run_do_nothing_and_keep_the_form():
    """With the form open and no run yet, a stepping key reaches the screen when no field has
    the focus (a click on the background): it is disabled, as the footer shows, not a crash."""
    async with scheduler(autorun=False, size=(120, 40)) as (app, pilot):
        app.screen.set_focus(None)
        for key in ("right", "left", "home", "end", "right_square_bracket", "left_square_bracket",
                    "g", "pagedown"):
            await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, SchedulerScreen) and app.screen.timeline is None
        assert app.screen.form_open and app.return_code is None
