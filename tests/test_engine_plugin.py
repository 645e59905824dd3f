"""Adding an engine is a new module and one registry line: a toy engine (tests/toy_engine.py,
a trie with one token per node) registered here runs a script through ``run``, the stepper
and the simulation, with no other change to radixviz."""
from __future__ import annotations

import json

import pytest

from radixviz.cache.engines import engine_names, register, unregister
from radixviz.cli import main
from radixviz.sim import Scheduler, make_workload

import toy_engine
from tui_helpers import pane_rows, screen_rows, stepper

SCRIPT = 'engine toy; insert "abc"; insert "abd"; match "abx"; lock "ab"; evict 9; unlock "ab"'


@pytest.fixture(autouse=True)
def toy():
    register(toy_engine.SPEC)   # the one registry line
    yield
    unregister("toy")


@pytest.fixture
def run(cli):
    """``radixviz run --device cpu --pool-size 16 --width 100 ARGV`` in this process: (exit code, stdout, stderr)."""
    return cli.bound("run", "--device", "cpu", "--pool-size", "16", "--width", "100")


class TestRun:
    def test_a_script_runs_on_the_toy_and_its_invariants_hold(self, run):
        code, out, err = run("-e", SCRIPT)
        assert (code, err) == (0, "")
        lines = out.splitlines()
        assert lines[2].startswith('  3  insert "abd"  →  prefix_len 2')   # a, b held; d new
        assert lines[3].startswith('  4  match "abx"  →  2 token(s)')
        # the lock kept "a" and "b": evict 9 took the two unlocked leaves only
        assert lines[5].startswith("  6  evict 9  →  evicted 2")
        assert "root  2 tokens · 2 evictable · toy" in out

    def test_the_engine_option_offers_it_and_json_names_it(self, run):
        code, out, _ = run("--engine", "toy", "--json", "-e", 'insert "ab"; match "a"')
        doc = json.loads(out)
        assert code == 0 and doc["engine"] == "toy" and doc["ops"][1]["result"]["matched"] == 1
        assert [n["key"] for n in doc["tree"]["children"]] == ["a"]   # one token per node

    def test_what_the_toy_lacks_is_refused_with_its_place(self, run):
        code, _, err = run("--engine", "toy", "-e", 'insert "ab"\nmatcher buggy')
        assert code == 2 and err.startswith("<-e>:2:1: matcher belongs to the 2024 engine")
        code, _, err = run("--engine", "toy", "--page-size", "2", "-e", 'insert "ab"')
        assert code == 2 and "--page-size needs an engine with pages: --engine 2026" in err


class TestStepper:
    async def test_the_stepper_shows_the_toy_tree_and_its_code(self, tmp_path):
        script = 'insert "abc"\ninsert "abd"\nmatch "abx"\n'
        async with stepper(tmp_path, script, size=(120, 36), engine_options={"engine": "toy"}) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            tree = "\n".join(pane_rows(app, "#tree-pane"))
            assert "root  4 tokens · 4 evictable · toy" in tree
            assert "'c'" in tree and "'d'" in tree          # one token on each edge
            assert any(" toy " in row for row in screen_rows(app))   # the status badge
            await pilot.press("home", "right", "right")      # op 1's first engine step
            await pilot.pause()
            assert "toy_engine.py" in "\n".join(pane_rows(app, "#code-pane"))


class TestSimulation:
    def test_the_scheduler_drives_the_toy(self):
        sched = Scheduler(600, "lpm", seed=1, record=False, engine="toy")
        sched.submit(make_workload("few-shot", 24, seed=1))
        while sched.step() is not None:
            sched.check_invariants()
        stats = sched.result().stats
        assert stats.finished == 24 and stats.hit_rate > 0.3 and sched.settings["engine"] == "toy"

    def test_simulate_runs_it_from_the_command_line(self, capsys):
        with pytest.raises(SystemExit) as info:
            main(["simulate", "--engine", "toy", "--workload", "few-shot", "--requests", "12",
                  "--pool-size", "600", "--json"])
        doc = json.loads(capsys.readouterr().out)
        assert info.value.code == 0 and doc["settings"]["engine"] == "toy" and doc["stats"]["finished"] == 12


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="engine 'toy' is registered already"):
        register(toy_engine.SPEC)
    assert engine_names().count("toy") == 1


def test_an_engine_lacking_a_verb_cannot_be_opened():
    from radixviz.cache import TokenToKVPool
    from radixviz.cache.facade import Engine as Facade

    class Half(Facade):      # no lock, unlock, invariants or preview
        def make_cache(self):
            return toy_engine.TrieCache()

    with pytest.raises(TypeError, match="abstract"):
        Half(toy_engine.SPEC, TokenToKVPool(4, device="cpu"), {})


def test_unregistered_it_is_gone_again():
    unregister("toy")
    assert "toy" not in engine_names()
