"""Issue 50's toy with two components: the trie of tests/toy_engine.py plus a window pool
that keeps a copy of the last ``window`` tokens of each path, locked and evicted on its own,
so a node can lose its copy and stay (tests/toy_window.py). Registered here (one registry
line), it runs through ``run`` (text and ``--json``), ``export`` (Graphviz), the sandbox (its
two pools and a tombstone read off the painted screen), ``simulate`` and the scheduler form,
drawn by the shared views from what it declares: radixviz names none of it, and the toy
reaches radixviz only through the engine contract's modules (docs/architecture.md).
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from radixviz.cache.engines import register, unregister
from radixviz.script.narrate import describe
from radixviz.settings import SimSettings
from radixviz.tui.app import RadixvizApp

import toy_window
from tui_helpers import narration, painted_text, status, stepper, wait_until

TESTS = Path(__file__).parent
FILES = ["toy_engine.py", "toy_window.py", "toy_window_ops.py", "toy_window_sim.py", "toy_window_views.py"]
# what an engine's wing may use of the shared code (docs/architecture.md, "The contract"):
# the contract and its data, the registry and options, the shared cache parts, the hooks of
# the session, the scheduler loop and the views
CONTRACT = {"radixviz.cache.contract", "radixviz.cache.engines", "radixviz.cache.facade", "radixviz.cache.invariants",
            "radixviz.cache.keys", "radixviz.cache.options", "radixviz.cache.pool", "radixviz.cache.snapshot",
            "radixviz.cache.trace", "radixviz.cache.values", "radixviz.limits", "radixviz.render.views",
            "radixviz.script.ops", "radixviz.script.parser", "radixviz.sim.engines"}
# window 2 keeps copies of 'c' 'd', then 'x' 'y' (the pool of 3 evicts 'c', the oldest); the
# lock holds 'x' 'y', so ``evict 2 window`` can take only 'd': two tombstones, the nodes stay
SCRIPT = 'insert "abcd"; insert "abxy"; lock "abxy"; evict 2 window; match "abxy"'


@pytest.fixture(autouse=True)
def toyw():
    register(toy_window.SPEC)   # the one registry line
    yield
    unregister("toyw")


@pytest.fixture
def run(cli):
    return cli.bound("run", "--device", "cpu", "--pool-size", "12", "--width", "110", "--engine", "toyw",
                     "--copies", "2", "--copy-pool", "3")


def _imports(path: Path) -> set:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("radixviz")}


class TestItsFiles:
    def test_radixviz_names_none_of_it(self):
        assert sorted(p.name for p in TESTS.glob("toy_*.py")) == FILES
        package = TESTS.parent / "radixviz"
        naming = [str(p.relative_to(package)) for p in package.rglob("*.py")
                  if "toyw" in (text := p.read_text(encoding="utf-8")) or "toy_window" in text or "window pool" in text]
        assert naming == []

    def test_it_needs_no_shared_module_of_its_own(self):
        """Every shared module it uses is one the contract offers every engine: nothing in
        radixviz was added or changed for it (its memory, kinds and views are declared)."""
        used = set().union(*(_imports(TESTS / name) for name in FILES))
        assert used <= CONTRACT, sorted(used - CONTRACT)
        spec = toy_window.SPEC
        assert [c.name for c in toy_window.Engine.memory] == ["device", "window"]
        assert set(spec.kinds) == {"copy", "tombstone"} and spec.views == "toy_window_views"


class TestRun:
    def test_the_text_shows_both_pools_and_the_tombstones(self, run):
        code, out, err = run("-e", SCRIPT)
        assert (code, err) == (0, "")
        assert "  4  evict 2 window  →  evicted 1 token(s) of window (slots 1)" in out
        assert "'d'  slots 3  ref 0  t 1  win ⊘  depth 4" in out            # lost its copy, stays
        assert "'x'  slots 6  ref 1  t 4  win 0 lock 1  depth 3" in out     # the lock held this one
        assert "window: 0 evictable, 2 protected · ⊘ tombstone" in out       # the header, per component
        assert "window pool · a copy of each path's last tokens  2/3 tokens" in out   # its own grid

    def test_json_carries_every_component_per_tree_and_per_node(self, run):
        code, out, _ = run("--json", "-e", SCRIPT)
        doc = json.loads(out)
        assert code == 0 and doc["version"] == 3
        device, window = doc["components"]
        assert (device["name"], device["pool"]) == ("device", {"size": 12, "used": 6, "free": 6})
        assert (window["name"], window["evictable"], window["protected"]) == ("window", 0, 2)
        assert window["pool"] == {"size": 3, "used": 2, "free": 1}
        assert doc["ops"][3]["result"] == {"evicted": 1, "freed_slots": [1], "component": "window"}
        assert doc["ops"][4]["result"]["window_hit"] == 2
        (a,) = doc["tree"]["children"]
        c, x = a["children"][0]["children"]
        assert c["parts"]["window"] == {"slots": None, "locks": 0}      # a tombstone: the node stays
        assert c["parts"]["device"] == {"slots": [2], "locks": 0}
        assert x["children"][0]["parts"]["window"] == {"slots": [2], "locks": 1}

    @pytest.mark.parametrize("argv, message", [
        (("-e", 'insert "ab"; evict 1 host'),
         "engine toyw keeps no 'host' memory to evict: its components are device, window"),
        (("--copy-pool", "0", "-e", "reset"), "argument --copy-pool: must be between 1 and 4096, not 0"),
        (("-e", "copy-pool 5000"), "copy pool must be between 1 and 4096, not 5000"),
    ])
    def test_refusals_are_one_line_and_exit_2(self, run, argv, message):
        code, _, err = run(*argv)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1

    def test_another_engine_names_its_own_components(self, cli):
        code, _, err = cli("run", "--device", "cpu", "--engine", "2026", "-e", 'insert "ab"; evict 1 window')
        assert code == 2 and "engine 2026 keeps no 'window' memory to evict: its components are device" in err


def test_export_draws_each_nodes_parts_and_the_components_in_the_caption(cli, tmp_path):
    target = tmp_path / "toy.dot"
    code, _, err = cli("export", "--device", "cpu", "--pool-size", "12", "--engine", "toyw", "--copies", "2",
                       "--copy-pool", "3", "-e", SCRIPT, "-o", target)
    dot = target.read_text(encoding="utf-8")
    assert (code, err) == (0, "")
    assert "window: 0 evictable, 2 protected" in dot                    # the caption, per component
    assert "win 0 lock 1" in dot and "win ⊘" in dot and "rounded,filled,dashed" in dot   # a tombstone's box


async def test_the_sandbox_paints_both_pools_and_a_tombstone(tmp_path):
    async with stepper(tmp_path, None, size=(120, 40), pool_size=12,
                       engine_options={"engine": "toyw", "copies": 2, "copy_pool": 3}) as (app, pilot):
        await pilot.press("colon")       # the input stays open for the next line after enter
        for line in SCRIPT.split("; ")[:4]:
            await pilot.press(*line, "enter")
        session = app.screen.model.session
        await wait_until(pilot, lambda: len(session.records) == 4, timeout=60)
        await pilot.press("escape", "right_square_bracket")     # to the end of the eviction
        await pilot.pause()
        tree = "\n".join(painted_text(app, "#tree-pane"))
        pools = "\n".join(painted_text(app, "#pool-pane"))
        assert "'d'  slots 3  ref 0  t 1  win ⊘" in tree                 # the tombstone, node kept
        assert "win 0 lock 1" in tree
        assert "device KV pool" in pools and "window pool · a copy of each path's last tokens" in pools
        assert "window 2/3" in status(app)                                # the status line's second pool
        assert "tombstone" in narration(app)                             # its declared words for the step
        lines = [describe(frame) for frame in session.frames]
        assert any(line.startswith("tombstone 'd': the window pool took this node's copy back") for line in lines)


class TestSimulate:
    def _totals(self, cli, pool: int) -> dict:
        code, out, _ = cli("simulate", "--engine", "toyw", "--copies", "4", "--copy-pool", pool,
                           "--workload", "few-shot", "--requests", "12", "--pool-size", "600", "--json")
        assert code == 0
        return json.loads(out)["stats"]

    def test_a_smaller_window_pool_evicts_more_copies(self, cli):
        small, large = self._totals(cli, 4), self._totals(cli, 4096)
        assert small["finished"] == large["finished"] == 12
        assert small["engine_totals"]["window copies made"] > 0
        assert small["engine_totals"]["window copies evicted"] > large["engine_totals"]["window copies evicted"] == 0

    def test_the_text_report_shows_the_hooks_counts(self, cli):
        code, out, _ = cli("simulate", "--engine", "toyw", "--workload", "few-shot", "--requests", "6",
                           "--pool-size", "600")
        assert code == 0 and "window copies made" in out and "window copies evicted" in out


class TestSchedulerForm:
    def _app(self):
        return RadixvizApp("scheduler", scheduler_options={
            "settings": SimSettings("few-shot", "lpm", seed=3, requests=8, pool_size=600), "autorun": False,
            "options": {"engine": "toyw", "engine_options": {"copies": 3, "copy_pool": 16}}})

    async def test_a_field_for_each_option_and_the_run_takes_them(self):
        from radixviz.sim import simulate
        from radixviz.tui.screens.scheduler import SchedulerScreen

        app = self._app()
        async with app.run_test(size=(80, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SchedulerScreen))
            window, pool = (app.screen.query_one(f"#sched-option-{name}") for name in ("copies", "copy-pool"))
            assert (window.value, pool.value) == ("3", "16")
            pool.value = "5000"
            await pilot.press("enter")
            await pilot.pause()
            assert "copy pool must be between 1 and 4096, not 5000" in str(
                app.screen.query_one("#sched-form-error").content)
            pool.value = "2"
            app.screen.query_one("#sched-form").submit()
            await wait_until(pilot, lambda: app.screen.timeline is not None, timeout=120)
            result = app.screen.timeline.result
        alone = simulate("few-shot", "lpm", 8, 600, 3, engine="toyw",
                         engine_options={"copies": 3, "copy_pool": 2}).stats
        assert result.settings["engine"] == "toyw"
        assert result.stats.engine_totals == alone.engine_totals and alone.engine_totals["window copies evicted"] > 0

    def test_simulate_app_opens_it_with_the_engine_and_its_options(self, cli, monkeypatch):
        seen = {}
        monkeypatch.setattr(RadixvizApp, "run", lambda app: seen.update(app.scheduler_options))
        code, _, _ = cli("simulate", "--app", "--engine", "toyw", "--copies", "5", "--copy-pool", "9",
                         "--requests", "8", "--pool-size", "600")
        assert code == 0 and seen["options"]["engine"] == "toyw"
        assert seen["options"]["engine_options"] == {"copies": 5, "copy_pool": 9}
