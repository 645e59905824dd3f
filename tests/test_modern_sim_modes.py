"""``simulate --engine 2026`` in every mode of the 2024 engine: ``--sweep`` (columns are the
eviction policies, or the scheduling policies under one eviction policy), ``--trace`` and
``--app`` (the scheduler screen drawing today's cache)."""
import json

import pytest

from radixviz.sim.runner import replay
from radixviz.engines.v2026.sim import todays_cache
from radixviz.sim.trace import load_trace
from radixviz.sim.workloads import make_workload
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.scheduler import SchedulerScreen
from tui_helpers import wait_until


def test_sweep_over_pool_sizes_with_eviction_policies_as_columns(cli):
    code, out, _ = cli("simulate", "--engine", "2026", "--workload", "priority-mix",
                       "--requests", "120", "--eviction-policy", "lru,priority",
                       "--sweep", "pool=1024,3072", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["engine"] == "2026" and doc["policies"] == ["lpm"]
    points = {(p["pool"], p["eviction_policy"]): p for p in doc["results"]}
    assert set(points) == {(1024, "lru"), (1024, "priority"), (3072, "lru"), (3072, "priority")}
    # each point is the engine's own run of those settings
    specs = make_workload("priority-mix", 120, seed=0)
    direct = replay(specs, "lpm", 3072, 0, cache_factory=todays_cache(1, "priority")).stats
    assert points[3072, "priority"]["hit_tokens"] == direct.hit_tokens
    assert points[3072, "priority"]["hit_rate"] != points[3072, "lru"]["hit_rate"]


def test_sweep_text_names_the_engine_and_the_2024_loop(cli):
    code, out, _ = cli("simulate", "--engine", "2026", "--page-size", "4", "--requests", "16",
                       "--eviction-policy", "lfu", "--sweep", "pool=512,1024")
    text = " ".join(out.split())
    assert code == 0 and "first release (January 2024), unchanged" in text
    assert "page size 4, eviction lfu" in text
    # one eviction policy: the columns are the four scheduling policies, as in 2024
    header = next(line for line in out.splitlines() if "pool slots" in line and "lpm" in line)
    assert all(p in header for p in ("lpm", "fcfs", "random", "weight"))


def test_trace_replays_on_todays_cache(cli):
    code, out, _ = cli("simulate", "--engine", "2026", "--page-size", "2",
                       "--eviction-policy", "slru", "--trace", "examples/trace.jsonl",
                       "--pool-size", "512", "--json")
    doc = json.loads(out)
    result = doc["results"]["lpm"]
    assert code == 0 and doc["workload"] == "examples/trace.jsonl"
    assert result["settings"]["engine"] == "2026" and result["settings"]["page_size"] == 2
    direct = replay(load_trace("examples/trace.jsonl"), "lpm", 512, 0,
                    cache_factory=todays_cache(2, "slru")).stats
    assert result["stats"]["hit_tokens"] == direct.hit_tokens > 0
    assert result["stats"]["finished"] == 14


def test_sweep_over_page_sizes(cli):
    code, out, _ = cli("simulate", "--engine", "2026", "--workload", "few-shot", "--requests", "40",
                       "--pool-size", "1024", "--policy", "lpm",
                       "--eviction-policy", "lru,slru", "--sweep", "page=1,16", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["page_size"] == [1, 16] and doc["sweep"] == {"page": [1, 16]}
    points = {(p["page"], p["eviction_policy"]): p for p in doc["results"]}
    specs = make_workload("few-shot", 40, seed=0)
    for page in (1, 16):
        direct = replay(specs, "lpm", 1024, 0, cache_factory=todays_cache(page, "slru")).stats
        assert points[page, "slru"]["hit_tokens"] == direct.hit_tokens
    # pages of 16 drop each prompt's partial last page from the match: fewer hits
    assert points[16, "lru"]["hit_tokens"] < points[1, "lru"]["hit_tokens"]
    code, out, _ = cli("simulate", "--engine", "2026", "--requests", "12", "--eviction-policy", "lfu",
                       "--sweep", "page=1,4")
    assert code == 0 and "cache hit rate by page size" in out
    assert "page size 1, 4, eviction lfu" in " ".join(out.split())


@pytest.mark.parametrize("argv, message", [
    (("--sweep", "page=1,4"), "--sweep page= varies an engine's pages: add --engine 2026"),
    (("--engine", "2026", "--sweep", "page=1,4", "--page-size", "4"), "drop --page-size"),
    (("--engine", "2026", "--sweep", "page=0,4"), "--sweep page: each value must be between 1 and 4096, not 0"),
])
def test_page_sweep_refusals(cli, argv, message):
    code, out, err = cli("simulate", *argv)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (("--app", "--eviction-policy", "lru,lfu"), "--app shows one eviction policy at a time"),
    (("--app", "--trace", "examples/trace.jsonl"), "--app shows one policy at a time"),
    (("--sweep", "pool=512", "--compare", "lpm,fcfs", "--eviction-policy", "lru,lfu"), "not both"),
    (("--insert", "release"), "--insert release is the 2024 release's bug"),
])
def test_what_stays_refused_is_one_line_and_exit_2(cli, argv, message):
    code, out, err = cli("simulate", "--engine", "2026", *argv)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


async def test_app_steps_the_scheduler_on_todays_cache(monkeypatch, cli):
    """The path a person takes: ``radixviz simulate --app --engine 2026 ...``, then stepping."""
    app = opened_app(monkeypatch, cli, "--engine", "2026", "--page-size", "4", "--eviction-policy", "lfu",
                     "--workload", "few-shot", "--requests", "12", "--pool-size", "768")
    async with app.run_test(size=(120, 40)) as pilot:
        def status() -> str:
            return str(app.screen.query_one("#sched-status").content)

        # the status line is drawn once the panes have their size, after the run is ready:
        # wait for what a person waits for, the first batch on the status line
        await wait_until(pilot, lambda: isinstance(app.screen, SchedulerScreen)
                         and not app.screen.busy and "batch 1/" in status(), timeout=120)
        screen = app.screen
        assert screen.timeline is not None and screen.timeline.settings["engine"] == "2026"
        assert "2026 cache, page 4, lfu" in status()
        await pilot.press("end")
        await wait_until(pilot, lambda: f"batch {len(screen.timeline)}/" in status())
        tree = [line.plain for line in screen.query_one("#sched-tree").lines]
        assert "2026, page 4, lfu" in tree[0]
        # every edge of today's cache holds whole pages
        record = screen.timeline.record
        assert all(len(n.key) % 4 == 0 for n in record.tree.root.walk())
        # the settings form (s) has a field for each of the engine's options, set as typed
        await pilot.press("s")
        await pilot.pause()
        assert screen.query_one("#sched-option-page-size").value == "4"
        assert "lfu" in str(screen.query_one("#sched-option-eviction-policy").render())


def opened_app(monkeypatch, cli, *argv: str) -> RadixvizApp:
    """``radixviz simulate --app ARGV`` as typed: the app it would run, not yet running."""
    opened = {}
    monkeypatch.setattr(RadixvizApp, "run", lambda app: opened.update(app=app))
    code, _, err = cli("simulate", "--app", *argv)
    assert code == 0, err
    return opened["app"]


async def first_run_shown(pilot, app) -> SchedulerScreen:
    """The scheduler screen once the command's own run is on it."""
    await wait_until(pilot, lambda: isinstance(app.screen, SchedulerScreen)
                     and app.screen.timeline is not None and not app.screen.busy, timeout=120)
    return app.screen


async def test_app_on_the_host_tier_opens_its_form_with_the_host_options(monkeypatch, cli):
    """``simulate --app --engine hicache``: the run is shown, and the form has the host
    tier's own fields (a size, a choice of write policy) set as typed."""
    app = opened_app(monkeypatch, cli, "--engine", "hicache", "--host-size", "1200", "--write-policy",
                     "write_back", "--workload", "few-shot", "--requests", "12", "--pool-size", "768")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await first_run_shown(pilot, app)
        assert screen.timeline.settings["engine"] == "hicache"
        await pilot.press("s")
        await pilot.pause()
        assert screen.query_one("#sched-option-host-size").value == "1200"
        assert "write_back" in str(screen.query_one("#sched-option-write-policy").render())
        assert app.return_code is None


async def test_the_host_tier_form_runs_with_the_host_size_left_empty(monkeypatch, cli):
    """No --host-size: the field is empty (the engine picks twice the pool), and enter in the
    form runs again as it is, with the host size the engine's own default."""
    app = opened_app(monkeypatch, cli, "--engine", "hicache", "--workload", "few-shot",
                     "--requests", "8", "--pool-size", "768")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await first_run_shown(pilot, app)
        first = screen.timeline
        await pilot.press("s")
        await pilot.pause()
        assert screen.query_one("#sched-option-host-size").value == ""
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.timeline is not first and screen.timeline is not None
                         and not screen.busy, timeout=120)
        assert not str(screen.query_one("#sched-form-error").content)
        assert screen.timeline.settings["engine"] == "hicache"
