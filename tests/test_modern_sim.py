"""Today's cache in the first release's scheduler loop: the pool stays exact, pages cut the
tail, and ``radixviz simulate --engine 2026`` compares eviction policies on the same requests."""
import json

import pytest

from radixviz.sim.scheduler import Scheduler
from radixviz.engines.v2026.sim import todays_cache
from radixviz.sim.workloads import make_workload


@pytest.mark.parametrize("page, eviction", [(1, "lru"), (4, "lfu"), (16, "slru")])
def test_every_pass_keeps_tree_and_pool_consistent(page, eviction):
    sched = Scheduler(700, "lpm", seed=3, record=False, cache_factory=todays_cache(page, eviction))
    sched.submit(make_workload("multi-turn", 40, seed=3))
    passes = 0
    while sched.step() is not None:
        passes += 1
        # every slot's pool count is the tree's plus the running requests' holds
        sched.check_invariants()
    assert sched.stats.finished == sched.stats.requests - sched.stats.refused > 0
    assert sched.stats.evicted_tokens > 0  # the pool was small enough to need eviction
    assert sched.cache.protected_size() == 0  # every lock was released
    if page > 1:
        assert all(len(n.key) % page == 0 for n in sched.cache.snapshot().root.walk())


def test_json_compares_eviction_policies_on_the_same_requests(cli):
    code, out, _ = cli("simulate", "--engine", "2026", "--workload", "tree-of-thought",
                       "--requests", "60", "--pool-size", "400", "--page-size", "2",
                       "--eviction-policy", "lru,mru,filo", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["engine"] == "2026" and doc["scheduler_loop"].startswith("2024")
    assert list(doc["results"]) == ["lru", "mru", "filo"]
    stats = {name: r["stats"] for name, r in doc["results"].items()}
    assert len({s["hit_tokens"] + s["prefill_computed"] for s in stats.values()}) == 1
    assert len({s["evicted_tokens"] for s in stats.values()}) > 1  # the policies really differ
    assert doc["results"]["mru"]["settings"]["eviction_policy"] == "mru"


def test_text_output_says_the_loop_is_the_2024_one(cli):
    code, out, _ = cli("simulate", "--engine", "2026", "--requests", "20", "--pool-size", "768",
                       "--eviction-policy", "lru,slru")
    text = " ".join(out.split())
    assert code == 0 and "first release (January 2024), unchanged" in text
    assert "March 2026" in text and "slru" in text and "cache hit rate" in text


@pytest.mark.parametrize("argv, message", [
    (["--engine", "2026", "--eviction-policy", "random"], "unknown eviction policy 'random'"),
    (["--engine", "2026", "--page-size", "0"], "--page-size must be between 1 and 4096"),
    (["--page-size", "4"], "need --engine 2026"),
    (["--engine", "2026", "--compare", "lpm,fcfs", "--eviction-policy", "lru,lfu"], "not both"),
])
def test_bad_options_are_one_line_with_exit_2(cli, argv, message):
    code, out, err = cli("simulate", *argv)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
