"""The host tier in the scheduler simulation: consistent at every pass, hits split by tier,
real K/V surviving the round trip, and ``simulate --engine hicache`` on the command line."""
import json

import pytest

from radixviz.cache import TokenToKVPool
from radixviz.engines.hicache.sim import run_host_sweep
from radixviz.sim.scheduler import Scheduler
from radixviz.sim.tiny_model import TinyModel
from radixviz.sim.workloads import make_workload
from test_kv_sim import greedy


@pytest.mark.parametrize("write_policy", ["write_through", "write_through_selective", "write_back"])
@pytest.mark.parametrize("page", [1, 4])
def test_every_pass_keeps_both_tiers_consistent(write_policy, page):
    sched = Scheduler(384, "lpm", seed=3, record=False, engine="hicache",
                      engine_options={"host_size": 800, "write_policy": write_policy, "page_size": page})
    sched.submit(make_workload("multi-turn", 24, 3))
    while sched.step() is not None:
        sched.check_invariants()
    stats = sched.result().stats
    assert stats.finished == 24 and stats.host_tier["written"] > 0
    if write_policy == "write_through_selective":   # chats are hit once before they return
        assert stats.host_tier["dropped"] > 0
    else:
        assert stats.host_tier["loaded"] > 0
    assert stats.hit_tokens == stats.device_hit_tokens + stats.host_hit_tokens


def test_the_host_tier_adds_hits_over_the_gpu_only_cache_on_the_same_requests():
    points = run_host_sweep([1025, 4096], workload="multi-turn", requests=64, pool_size=512, seed=0)
    base, small, large = (p.stats for p in points)
    assert points[0].settings["engine"] == "2026" and points[1].settings["engine"] == "hicache"
    assert base.host_hit_tokens == 0 and base.hit_rate < small.hit_rate < large.hit_rate
    assert small.host_hit_tokens > 0
    # every token loaded back served a request (a whole prompt keeps its last token to compute)
    assert large.host_tier["loaded"] >= large.host_hit_tokens > 0
    assert base.finished == small.finished == large.finished == 64


def test_kv_loaded_back_from_the_host_generates_the_same_text():
    pool = TokenToKVPool(400, device="cpu")
    sched = Scheduler(400, "lpm", seed=0, pool=pool, model=TinyModel(pool), record=False,
                      engine="hicache", engine_options={"host_size": 800})
    inputs = {}
    submit = sched.submit

    def remember(specs):
        queued = submit(specs)
        inputs.update({req.rid: req.input_ids for req in queued})
        return queued
    sched.submit = remember
    sched.submit(make_workload("multi-turn", 8, 0))
    result = sched.run()
    assert result.stats.host_hit_tokens > 0 and result.stats.finished == 8
    for rid, out in result.outputs.items():
        assert out == greedy(inputs[rid], len(out)), f"request {rid}"


def test_simulate_sweeps_host_sizes_beside_the_gpu_only_cache(cli):
    code, out, _ = cli("simulate", "--engine", "hicache", "--workload", "multi-turn", "--requests", "32",
                       "--pool-size", "384", "--sweep", "host=400,800")
    assert code in (0, None)
    assert "what the host tier adds" in out and "GPU only" in out and "hits loaded from host" in out
    assert "tokens written to host" in out and "▓ loaded back from the host" in out
    code, out, _ = cli("simulate", "--engine", "hicache", "--workload", "multi-turn", "--requests", "32",
                       "--pool-size", "384", "--sweep", "host=400,800", "--json")
    doc = json.loads(out)
    assert [r["host_size"] for r in doc["results"]] == [None, 400, 800]
    assert doc["results"][0]["engine"] == "2026" and "host_tier" in doc["results"][1]


@pytest.mark.parametrize("argv, words", [
    (["--engine", "hicache", "--pool-size", "256", "--host-size", "200"], "larger than the pool"),
    (["--engine", "2026", "--host-size", "5000"], "need --engine hicache"),
    (["--sweep", "host=5000"], "add --engine hicache"),
    (["--engine", "hicache", "--sweep", "pool=512,1024"], "sweeps host sizes"),
])
def test_simulate_refuses_host_options_that_make_no_sense(cli, argv, words):
    code, _out, err = cli("simulate", *argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1
