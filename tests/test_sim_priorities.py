"""Request priorities in the simulation: today's cache stores them at insert (as SGLang's
``cache_finished_req`` passes the request's priority), its ``priority`` eviction policy
keeps the high-priority prefix longer than LRU does, and the 2024 engine ignores them."""
import json
from dataclasses import replace

import pytest

from radixviz.sim.scheduler import Scheduler
from radixviz.engines.v2026.sim import todays_cache
from radixviz.sim.workloads import make_workload, request_count

REQUESTS, POOL = 200, 3072


def _chains(specs):
    for spec in specs:
        while spec is not None:
            yield spec
            spec = spec.then


def _system_prompt(specs) -> tuple:
    """The prefix every priority-1 request of priority-mix shares, found from the requests."""
    prompts = [s.input_ids for s in _chains(specs) if s.priority == 1]
    shared = prompts[0]
    for prompt in prompts[1:]:
        n = next((i for i, (a, b) in enumerate(zip(shared, prompt)) if a != b), min(len(shared), len(prompt)))
        shared = shared[:n]
    return shared


def _resident(cache, key) -> bool:
    """Whether the tree holds all of ``key`` (read only: walking nodes touches no clock)."""
    node, i = cache.root_node, 0
    while i < len(key):
        child = node.children.get(key[i])
        if child is None or tuple(child.key[:len(key) - i]) != tuple(key[i:i + len(child.key)]):
            return False
        node, i = child, i + len(child.key)
    return True


def _run(eviction, specs, system=None):
    sched = Scheduler(POOL, "lpm", seed=0, record=False, cache_factory=todays_cache(1, eviction))
    sched.submit(specs)
    system = system or _system_prompt(specs)
    passes = resident = 0
    while sched.step() is not None:
        passes += 1
        resident += _resident(sched.cache, system)
    return sched, passes, resident


@pytest.fixture(scope="module")
def specs():
    return make_workload("priority-mix", REQUESTS, seed=0)


@pytest.fixture(scope="module")
def runs(specs):
    return {eviction: _run(eviction, specs) for eviction in ("lru", "priority")}


def test_priority_mix_has_high_priority_shared_prompts_and_low_priority_one_offs(specs):
    every = list(_chains(specs))
    assert request_count(specs) == REQUESTS == len(every)
    high = [s for s in every if s.priority == 1]
    low = [s for s in every if s.priority == 0]
    assert len(high) + len(low) == REQUESTS and 0 < len(high) < len(low)
    assert len(_system_prompt(specs)) >= 256   # a long prompt the high-priority ones share
    assert make_workload("priority-mix", REQUESTS, seed=0) == specs   # seeded


def test_the_priority_policy_keeps_the_high_priority_prefix_longer_than_lru(runs):
    (lru, lru_passes, lru_resident), (prio, prio_passes, prio_resident) = runs["lru"], runs["priority"]
    # measured by stepping the engine: the shared prompt sits in the tree in more passes
    assert prio_resident / prio_passes > lru_resident / lru_passes
    assert prio.stats.priority_hit_rate(1) > lru.stats.priority_hit_rate(1)
    assert prio.stats.hit_rate > lru.stats.hit_rate
    assert prio.stats.evicted_tokens != lru.stats.evicted_tokens
    # the same traffic either way
    assert prio.stats.finished == lru.stats.finished == REQUESTS


def test_priorities_reach_the_tree_through_insert(runs, specs):
    sched = runs["priority"][0]
    assert sched.settings["priorities"] == "at insert" and sched.settings["engine"] == "2026"
    system = _system_prompt(specs)
    node = sched.cache.root_node.children[system[0]]
    assert node.priority == 1   # the max along the path of the priority-1 inserts
    one_offs = [c for c in sched.cache.root_node.children.values() if c is not node]
    assert one_offs and all(c.priority == 0 for c in one_offs)


def test_without_priorities_the_priority_policy_is_lru(specs):
    """The policy key is (priority, last access): with every priority 0 it orders as LRU,
    so the difference above comes from the priorities alone."""
    flat = [_flatten(s) for s in specs]
    lru, prio = (_run(e, flat, _system_prompt(specs))[0].stats for e in ("lru", "priority"))
    assert prio.to_dict() == lru.to_dict()


def _flatten(spec):
    return replace(spec, priority=0, then=_flatten(spec.then) if spec.then else None)


def test_the_2024_engine_ignores_priorities(specs):
    def run(traffic):
        sched = Scheduler(POOL, "lpm", seed=0, record=False)
        sched.submit(traffic)
        sched.run()
        return sched
    with_priorities, without = run(specs), run([_flatten(s) for s in specs])
    assert with_priorities.settings["priorities"] == "ignored"
    assert with_priorities.settings["engine"] == "2024"
    assert with_priorities.stats.hit_tokens == without.stats.hit_tokens
    assert with_priorities.stats.evicted_tokens == without.stats.evicted_tokens


def test_cli_policy_table_shows_priority_apart_from_lru(cli):
    argv = ("--engine", "2026", "--workload", "priority-mix", "--requests", str(REQUESTS),
            "--pool-size", str(POOL), "--eviction-policy", "lru,priority")
    code, out, _ = cli("simulate", *argv, "--json")
    doc = json.loads(out)
    stats = {name: r["stats"] for name, r in doc["results"].items()}
    assert code == 0 and stats["priority"]["hit_rate"] > stats["lru"]["hit_rate"]
    assert stats["priority"]["by_priority"]["1"]["hit_rate"] > stats["lru"]["by_priority"]["1"]["hit_rate"]
    code, out, _ = cli("simulate", *argv)
    rows = {line.split()[1]: line.split() for line in out.splitlines() if line.startswith("│")}
    assert code == 0 and "p1 hits" in out
    assert rows["lru"][3] != rows["priority"][3]   # hit rate column differs


def test_cli_2024_engine_says_it_ignores_priorities(cli):
    code, out, _ = cli("simulate", "--workload", "priority-mix", "--requests", "24",
                       "--pool-size", "1024")
    text = " ".join(out.split())
    assert code == 0 and "hit rate, priority 1" in text
    assert "the 2024 engine has no priority field and ignores them" in text
    code, out, _ = cli("simulate", "--workload", "few-shot", "--requests", "12")
    assert code == 0 and "priority" not in out   # no priorities, no note


def test_trace_priorities(tmp_path, cli):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"prompt": "system: be brief. hi", "output_len": 4, "priority": 3}\n'
                     '{"prompt": "other", "output_len": 4}\n')
    code, out, _ = cli("simulate", "--engine", "2026", "--eviction-policy", "priority",
                       "--trace", str(trace), "--json")
    doc = json.loads(out)
    by = doc["results"]["lpm"]["stats"]["by_priority"]
    assert code == 0 and by["3"]["finished"] == 1 and by["0"]["finished"] == 1
    trace.write_text('{"prompt": "x", "output_len": 4, "priority": "high"}\n')
    code, out, err = cli("simulate", "--engine", "2026", "--trace", str(trace))
    assert code == 2 and out == "" and err.strip().endswith(
        "t.jsonl:1: priority must be a whole number, not 'high'")


def test_the_insert_after_prefill_passes_the_priority_too():
    # SGLang passes the request's priority from cache_unfinished_req as well as from
    # cache_finished_req (radix_cache.py:494, 536 at 9fbe6800a); so does the loop, and the doc says so
    from pathlib import Path
    from radixviz.sim.request import RequestSpec
    sched = Scheduler(256, "lpm", seed=0, record=False, cache_unfinished=True,
                      cache_factory=todays_cache(1, "priority"))
    sched.submit(RequestSpec(tuple(range(300, 310)), 4, priority=5))
    sched.step()                                        # the prefill: nothing has finished yet
    assert sched.stats.finished == 0
    assert [c.priority for c in sched.cache.root_node.children.values()] == [5]
    doc = " ".join((Path(__file__).resolve().parent.parent / "docs" / "simulation-api.md").read_text().split())
    assert "of a prompt whose prefill has run (`cache_unfinished_req`" in doc
