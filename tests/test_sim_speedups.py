"""What makes the 2024 simulation fast changes no result: the remembered edge comparison, and
a match over one edge returning that edge's slots without a copy.

The speed itself is measured by bench/sim.py, never here.
"""
from __future__ import annotations

import random

import pytest

import radixviz.sim.edge_memo as edge_memo
from radixviz.cache import TokenToKVPool, match
from radixviz.cache.engines import open_engine
from radixviz.sim import Scheduler, make_workload

from sim_agreement import compare


class TestRememberedComparison:
    def test_answers_as_the_comparison_does_from_any_start(self, monkeypatch):
        monkeypatch.setattr(edge_memo, "REMEMBER_AT_MOST", 50)   # it starts afresh often too
        rng = random.Random(5)
        remembered = edge_memo.EdgeMemo(match)
        prompt = tuple(rng.randint(0, 3) for _ in range(200))
        edges = [prompt[a:b] for a, b in ((0, 40), (0, 120), (40, 90), (90, 200), (3, 80))]
        keys = [prompt, prompt[:100] + (9,) * 50, prompt[:60] + prompt[:60], prompt[40:]]
        for key in keys[:3]:       # the last is never watched: compared afresh each time
            remembered.watch(key)
        for _ in range(3):   # asked again: answered from memory, the same
            for edge in edges:
                for key in keys:
                    assert remembered(edge, key) == match(edge, key)
                    for start in (0, 1, 40, 90, len(key) - 1, len(key)):
                        assert remembered(edge, key, start) == match(edge, key, start)

    def test_equal_but_distinct_tuples_are_answered_by_content(self):
        remembered = edge_memo.EdgeMemo(match)
        edge, key, other = tuple(range(64)), tuple(range(64)), tuple(range(10)) + (-1,) * 60
        remembered.watch(key)
        remembered.watch(other)
        assert remembered(edge, key) == 64
        assert remembered(edge, other) == 10   # another key object
        remembered.forget(key)
        assert remembered(edge, key) == 64 and len(remembered.seen) == 1


class TestOneEdgeMatchReturnsItsSlots:
    def test_one_edge_gives_its_own_slots_and_more_edges_their_concatenation(self):
        pool = TokenToKVPool(256, device="cpu")
        engine = open_engine("2024", pool)
        for word in ("system prompt: question one", "system prompt: question two", "other"):
            key = tuple(word)
            engine.insert(key, pool.alloc(len(key)))
        slots, node = engine.match(tuple("other thing"))                 # one edge
        assert slots is node.value and slots.tolist() == list(range(27, 32))
        longer, node = engine.match(tuple("system prompt: question one"))   # two edges
        assert longer.tolist() == list(range(27)) and longer is not node.value
        nothing, node = engine.match(tuple("zzz"))
        assert nothing.tolist() == [] and node is engine.cache.root_node


def run_passes(workload, requests, policy, pool, seed, engine="2024", remember_edges=True):
    sched = Scheduler(pool, policy, seed=seed, record=False, engine=engine, remember_edges=remember_edges)
    sched.submit(make_workload(workload, requests, seed))
    passes = []
    while (record := sched.step()) is not None:
        passes.append((record.kind, record.admitted, record.hit_tokens, record.computed_tokens,
                       record.finished, record.evicted_tokens,
                       tuple((e.kind, e.rid) for e in record.events)))
    return passes, sched.stats


class TestTheMemoChangesNoPass:
    @pytest.mark.parametrize("engine", ["2024", "2026"])
    @pytest.mark.parametrize("workload, requests, policy, pool", [
        ("shared-prompt", 400, "lpm", 4096), ("few-shot", 300, "weight", 2048),
        ("multi-turn", 120, "fcfs", 1024), ("tree-of-thought", 200, "lpm", 1024)])
    def test_pass_by_pass_with_and_without(self, engine, workload, requests, policy, pool):
        remembered = run_passes(workload, requests, policy, pool, 3, engine)
        plain = run_passes(workload, requests, policy, pool, 3, engine, remember_edges=False)
        assert remembered == plain and len(plain[0]) > 20


@pytest.mark.parametrize("engine", ["2024", "2026"])
def test_the_scheduler_builds_its_own_memo_and_can_go_without(engine):
    assert isinstance(Scheduler(256, engine=engine).edge_memo, edge_memo.EdgeMemo)
    assert Scheduler(256, engine=engine, remember_edges=False).edge_memo is None


@pytest.mark.parametrize("engine", ["2024", "2026"])
def test_a_finished_prompt_is_forgotten_so_a_long_stream_keeps_none_alive(engine):
    sched = Scheduler(1024, "lpm", seed=1, record=False, engine=engine)
    sched.submit(make_workload("shared-prompt", 200, 1))
    asked = 0
    while sched.step() is not None:
        asked = max(asked, len(sched.edge_memo.seen))
    assert asked > 0                                    # it did remember, while they waited
    assert sched.stats.finished == 200 and not sched.edge_memo.seen and not sched.edge_memo.live


class TestTheBenchmarkRunAgreesWithTheReference:
    def test_a_shorter_run_of_its_shape(self):
        result = compare("shared-prompt", 1500, "lpm", 16384, 0)
        assert result.agrees, result.difference
        assert result.passes > 150 and result.first_oom is None

    @pytest.mark.slow
    def test_the_whole_run_bench_sim_times(self):
        # bench/sim.py's defaults: 10,000 requests, lpm, a 16,384-slot pool, seed 0
        result = compare("shared-prompt", 10_000, "lpm", 16384, 0)
        assert result.agrees, result.difference
        assert result.passes > 1000 and result.first_oom is None
