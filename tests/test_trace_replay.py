"""Long trace replays at speed (issue 56): one torch thread, the pool's kept counts, the
optimum on request, how much a failed allocation evicts, shared Mooncake blocks."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from radixviz.cli import main
from radixviz.commands.simulate_traces import ALLOC_EVICT as FLAG_CHOICES
from radixviz.sim.runner import replay
from radixviz.sim.scheduler import ALLOC_EVICT, Scheduler
from radixviz.sim.traces import mooncake
from radixviz.sim.traces.synthetic import mooncake as mooncake_lines
from radixviz.sim.workloads import make_workload


def run_json(capsys, *argv: str) -> dict:
    with pytest.raises(SystemExit) as info:
        main(["simulate", *argv, "--json"])
    out = capsys.readouterr().out
    assert info.value.code == 0, out
    return json.loads(out)


def trace(tmp_path, n: int = 60, output: int = 1):
    path = tmp_path / "mooncake.jsonl"
    with open(path, "w") as handle:
        for obj in mooncake_lines(n, seed=3, block_size=16):
            handle.write(json.dumps(dict(obj, output_length=output)) + "\n")
    return str(path)


def test_the_command_runs_torch_on_one_thread():
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('threads', __import__('torch').get_num_threads(), file=sys.stderr))\n"
             "from radixviz.cli import main\n"
             "sys.argv = ['radixviz', 'simulate', '--requests', '4']\nmain()")
    child = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env={k: v for k, v in __import__("os").environ.items() if k != "OMP_NUM_THREADS"})
    assert child.returncode == 0 and "threads 1" in child.stderr


class TestAllocEvict:
    def test_each_engine_defaults_to_its_sglangs_and_the_flag_offers_the_same_two(self):
        assert FLAG_CHOICES == ALLOC_EVICT
        for engine in ("2024", "2026"):
            assert Scheduler(256, engine=engine).alloc_evict == "need"

    def test_shortfall_evicts_no_more_than_need_and_hits_at_least_as_much(self, capsys, tmp_path):
        path = trace(tmp_path, 80)
        base = ["--trace", path, "--block-size", "16", "--pool-size", "512", "--policy", "fcfs",
                "--max-running", "1"]
        need = run_json(capsys, *base)
        short = run_json(capsys, *base, "--alloc-evict", "shortfall")
        assert need["settings"]["alloc_evict"] == "need" and short["settings"]["alloc_evict"] == "shortfall"
        assert short["stats"]["evicted_tokens"] < need["stats"]["evicted_tokens"]
        assert short["stats"]["hit_tokens"] >= need["stats"]["hit_tokens"]

    def test_a_bad_choice_is_one_line_and_exit_2(self, capsys):
        with pytest.raises(SystemExit) as info:
            main(["simulate", "--alloc-evict", "all"])
        assert info.value.code == 2 and "invalid choice" in capsys.readouterr().err


class TestOptimum:
    def test_on_for_a_short_run_off_when_asked(self, capsys, tmp_path):
        path = trace(tmp_path, 40)
        assert "optimum" in run_json(capsys, "--trace", path, "--block-size", "16")
        assert "optimum" not in run_json(capsys, "--trace", path, "--block-size", "16", "--no-optimum")

    def test_off_past_the_stated_count_unless_asked(self, monkeypatch):
        monkeypatch.setattr("radixviz.sim.runner.OPTIMUM_UP_TO", 10)
        specs = make_workload("few-shot", 11, 0)
        assert "optimum" not in replay(specs, pool_size=2048).traffic
        assert "optimum" in replay(specs, pool_size=2048, optimum=True).traffic
        assert "optimum" in replay(specs[:10], pool_size=2048).traffic


def test_shared_blocks_give_the_tokens_a_plain_expansion_gives():
    blocks = mooncake.Blocks(16)
    for obj in mooncake_lines(50, seed=1, block_size=16):
        plain = [t for b in obj["hash_ids"] for t in mooncake.block_tokens(b, 16)][:obj["input_length"]]
        assert mooncake.parse(obj, "x:1", 16, blocks=blocks).input_ids == tuple(plain)
    again = mooncake.parse({"input_length": 16, "output_length": 1, "hash_ids": [100]}, "x:2", 16, blocks=blocks)
    # a block met again is the same token objects: the tree compares them by identity first
    assert all(a is b for a, b in zip(again.input_ids, blocks(100)))


def test_the_pool_keeps_its_free_list_through_a_whole_run():
    sched = Scheduler(300, "lpm", seed=0, record=False)
    sched.submit(make_workload("multi-turn", 24, 0))
    while sched.step() is not None:
        sched.pool.check_free_list()
        assert sched.pool.available_size() == int((sched.pool.mem_state == 0).sum())
