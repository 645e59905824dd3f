"""``Scheduler(scheduler="v0.5.23")`` against reference_v0523.py, a loop written separately from
SGLang v0.5.23's files, pass by pass; and each rule seen to act where the comparison runs."""
from __future__ import annotations

import pytest

from radixviz.sim import FakeSampler, Scheduler, make_workload
from radixviz.sim.request import RequestSpec

from reference_v0523 import ReferenceV0523
from sim_agreement import _show, sim_passes


def compare(workload, requests, policy, pool_size, seed, logprob_start_len=None):
    """The first pass where the two loops part (None: they agree to the end), and the sim's Scheduler."""
    mine, my_oom, sched = sim_passes(workload, requests, policy, pool_size, seed, scheduler="v0.5.23",
                                     logprob_start_len=logprob_start_len)
    ref = ReferenceV0523(pool_size, policy, FakeSampler(seed), seed=seed,
                         logprob_start_len=-1 if logprob_start_len is None else logprob_start_len)
    for spec in make_workload(workload, requests, seed):
        ref.add(spec.input_ids, spec.max_new_tokens, spec.follow_ups)
    ref.run()
    theirs = [(p.kind, p.admitted, p.hit_tokens, p.computed_tokens, p.finished) for p in ref.passes]
    assert not ref.truncated and not sched.stats.refused and my_oom is None and ref.out_of_memory_at is None
    for index, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            return f"pass {index}: simulation {_show(a)}, reference {_show(b)}", sched
    if len(mine) != len(theirs):
        return f"simulation ran {len(mine)} passes, reference {len(theirs)}", sched
    return None, sched


@pytest.mark.parametrize("policy", ["fcfs", "lpm", "hrrn", "shortest-prefill-first", "weight"])
@pytest.mark.parametrize("workload, requests, pool", [("few-shot", 48, 1024), ("tree-of-thought", 48, 2048),
                                                      ("multi-turn", 24, 1024)])
def test_each_policy_agrees_pass_by_pass(policy, workload, requests, pool):
    difference, sched = compare(workload, requests, policy, pool, 1)
    assert difference is None, difference
    assert sched.scheduler == "v0.5.23" and sched.settings["scheduler_loop"] == "v0.5.23"


def test_fcfs_is_the_default_and_admission_stops_at_the_first_misfit():
    assert Scheduler(256, scheduler="v0.5.23").policy == "fcfs"
    assert Scheduler(256).policy == "lpm"                       # the release's loop keeps its own
    difference, sched = compare("no-sharing", 40, "fcfs", 700, 5)
    assert difference is None, difference
    # a tight pool: a round where the head of the queue did not fit admitted nobody behind it
    sched = Scheduler(700, scheduler="v0.5.23", seed=5)
    sched.submit(make_workload("no-sharing", 40, 5))
    stops = [d for r in iter(sched.step, None) for d in r.decisions if "stops here" in d.reason]
    assert stops


def test_lpm_and_hrrn_fall_back_to_fcfs_past_128_waiting():
    for policy in ("lpm", "hrrn"):
        difference, sched = compare("few-shot", 200, policy, 2048, 2)
        assert difference is None, difference
    sched = Scheduler(2048, "lpm", scheduler="v0.5.23", seed=2, record=False)
    sched.submit(make_workload("few-shot", 200, 2))
    rounds = []
    while sched.step() is not None:
        rounds.append((len(sched.waiting), sched.round_policy))
    assert rounds[0][1] == "fcfs" and any(policy == "lpm" for _, policy in rounds)


def test_a_match_stops_one_token_short_of_the_prompt_or_at_its_logprob_start():
    prompt = tuple(range(100, 140))
    for start, expected in ((None, 39), (12, 12)):
        sched = Scheduler(1024, scheduler="v0.5.23", record=False, logprob_start_len=start)
        sched.submit(RequestSpec(prompt, 2))
        sched.run()
        sched.submit(RequestSpec(prompt, 2))
        record = sched.step()
        assert record.hit_tokens == expected and record.computed_tokens == len(prompt) - expected
    for start in (None, 100):
        difference, _ = compare("shared-prompt", 32, "lpm", 2048, 2, logprob_start_len=start)
        assert difference is None, difference


def test_hrrn_and_shortest_prefill_first_order_by_their_own_rules():
    # the same queue, three orders: most matched, highest response ratio, fewest to compute
    sched = Scheduler(4096, "hrrn", scheduler="v0.5.23", seed=3)
    sched.submit(make_workload("tree-of-thought", 60, 3))
    orders = set()
    for _ in range(40):
        record = sched.step()
        if record is not None and record.kind == "prefill":
            orders.add(tuple(rid for rid, _ in record.queue_order))
    assert len(orders) > 1
    for policy in ("hrrn", "shortest-prefill-first"):
        difference, _ = compare("tree-of-thought", 120, policy, 4096, 3)
        assert difference is None, difference


def test_simulate_takes_the_scheduler_and_a_logprob_start_from_the_command_line(cli):
    import json
    code, out, err = cli("simulate", "--scheduler", "v0.5.23", "--json", "--requests", "24")
    settings = json.loads(out)["settings"]
    assert code == 0, err
    assert settings["scheduler_loop"] == "v0.5.23" and settings["policy"] == "fcfs"
    code, out, _ = cli("simulate", "--scheduler", "v0.5.23", "--policy", "lpm", "--logprob-start", "0",
                       "--json", "--requests", "24")
    assert code == 0 and json.loads(out)["stats"]["hit_tokens"] == 0     # nothing may be matched
    code, _, err = cli("simulate", "--policy", "hrrn")
    assert code == 2 and "add --scheduler v0.5.23" in err
    code, _, err = cli("simulate", "--scheduler", "v0.5.23", "--workers", "2")
    assert code == 2 and "--scheduler v0.5.23" in err


@pytest.mark.slow   # eleven runs of up to 400 requests: about 6 s
def test_lessons_7_and_11_quote_the_v0523_runs():
    from pathlib import Path

    from radixviz.engines.v2026.sim import todays_cache
    from radixviz.sim.runner import replay, simulate
    lessons = Path(__file__).resolve().parent.parent / "lessons"
    seven = " ".join((lessons / "07-scheduling-policies.md").read_text().split())
    for n in (100, 200, 400):
        fcfs, lpm = (simulate("few-shot", p, requests=n, pool_size=1024, seed=0, scheduler="v0.5.23")
                     for p in ("fcfs", "lpm"))
        assert (f"| {n} requests | {fcfs.stats.hit_rate:.1%} | {lpm.stats.hit_rate:.1%} | "
                f"{lpm.stats.fallback_rounds} |").replace("%", " %") in seven
    eleven = " ".join((lessons / "11-eviction-policies.md").read_text().split())
    specs = make_workload("priority-mix", 200, 0)
    rates = {}
    for eviction in ("lru", "lfu", "priority", "slru"):
        stats = replay(specs, None, 3072, 0, scheduler="v0.5.23",
                       cache_factory=todays_cache(1, eviction)).stats
        rates[eviction] = (f"{stats.hit_rate:.1%}", f"{stats.priority_hit_rate(1):.1%}")
    assert rates["lfu"] == rates["priority"] == rates["slru"]
    lru, rest = (f"{a} ({b} for priority 1)".replace("%", " %") for a, b in (rates["lru"], rates["lfu"]))
    assert f"LRU reaches {lru}" in eleven
    assert f"`slru` {rest.split(' (')[0]} ({rates['lfu'][1].replace('%', ' %')})" in eleven
