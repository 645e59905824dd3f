"""The scheduler loop on the real cache and pool: slots conserved, memory pressure handled."""
import json

import pytest

from radixviz.cache import check_invariants
from radixviz.sim import FakeSampler, Scheduler, make_workload, simulate
from radixviz.sim.policies import POLICIES
from radixviz.sim.request import RequestSpec
from radixviz.sim.workloads import WORKLOADS


def run_checked(sched):
    """Step to the end, checking tree, pool and the running requests' slots after every pass."""
    records = []
    while (record := sched.step()) is not None:
        check_invariants(sched.cache, sched.pool, held=sched.held_slots())
        records.append(record)
    return records


def assert_drained(sched):
    """Nothing running: every used slot belongs to the tree and nothing is locked."""
    assert sched.done
    assert sched.pool.used_size() == sched.cache.total_size()
    assert sched.cache.evictable_size() == sched.cache.total_size()
    assert sched.req_pool.available_size() == sched.req_pool.size


class TestSlotsConserved:
    @pytest.mark.parametrize("workload", list(WORKLOADS))
    @pytest.mark.parametrize("policy", list(POLICIES))
    def test_every_pass_under_memory_pressure(self, workload, policy):
        sched = Scheduler(700, policy, seed=3)
        sched.submit(make_workload(workload, 24, seed=3))
        run_checked(sched)
        assert_drained(sched)
        assert sched.stats.finished + sched.stats.refused == sched.stats.requests

    def test_a_finished_request_leaves_its_sequence_minus_the_last_token(self):
        sched = Scheduler(256, "lpm", seed=1)
        [req] = sched.submit(RequestSpec(tuple(range(10)), 5))
        run_checked(sched)
        out = sched.outputs[req.rid]
        assert len(out) == 5 and all(0 <= t < 256 for t in out)
        # the newest token was sampled but never fed back, so it has no KV to keep
        assert sched.cache.total_size() == 10 + 5 - 1
        slots, _ = sched.cache.match_prefix(tuple(range(10)) + out)
        assert len(slots) == 14
        assert_drained(sched)

    def test_a_fully_cached_prompt_recomputes_only_its_last_token(self):
        sched = Scheduler(256, "lpm", seed=1)
        sched.submit(RequestSpec(tuple(range(10)), 3))
        run_checked(sched)
        sched.submit(RequestSpec(tuple(range(10)), 3))
        record = sched.step()
        assert record.kind == "prefill" and (record.hit_tokens, record.computed_tokens) == (9, 1)
        run_checked(sched)
        assert_drained(sched)


class TestOutOfMemory:
    def test_decode_out_of_memory_retracts_instead_of_exiting(self):
        # each request needs 20 + 100 slots; the 0.4 estimate lets a second one in while
        # the first is decoding, and 240 slots do not fit in 200
        sched = Scheduler(200, "lpm", seed=0)
        sched.submit([RequestSpec(tuple([i] * 20), 100) for i in range(1, 4)])
        records = run_checked(sched)
        assert sched.stats.retracted >= 1
        retracted = [e for r in records for e in r.events if e.kind == "retracted"]
        assert retracted and "back to the queue" in retracted[0].message
        assert sched.stats.finished == 3
        assert_drained(sched)

    def test_a_request_that_could_never_fit_is_refused_and_the_rest_run(self):
        sched = Scheduler(100, "fcfs", seed=0)
        queued = sched.submit([RequestSpec(tuple(range(90)), 20), RequestSpec((1, 2, 3), 4)])
        assert [r.rid for r in queued] == [1]
        [event] = sched.events
        assert event.kind == "refused" and event.rid == 0 and "110 slots" in event.message
        run_checked(sched)
        assert (sched.stats.refused, sched.stats.finished) == (1, 1)


    def test_no_room_at_prefill_gives_requests_back_instead_of_exiting(self, monkeypatch):
        # admission's estimate promises the room, so force the allocation to fail once
        from radixviz.sim import steps
        real, calls = steps.alloc_slots, []

        def fail_first(s, need):
            calls.append(need)
            return None if len(calls) == 1 else real(s, need)

        monkeypatch.setattr(steps, "alloc_slots", fail_first)
        sched = Scheduler(512, "fcfs", seed=0)
        sched.submit([RequestSpec((1, 2, 3), 4), RequestSpec((4, 5, 6), 4)])
        record = sched.step()
        check_invariants(sched.cache, sched.pool, held=sched.held_slots())
        assert [e.kind for e in record.events] == ["prefill-deferred"]
        assert record.admitted == (0,) and [r.rid for r in sched.waiting] == [1]
        run_checked(sched)
        assert sched.stats.finished == 2
        assert_drained(sched)


class TestCacheAwarePolicies:
    @pytest.mark.parametrize("seed", [0, 1, 2])
    def test_lpm_hits_at_least_as_often_as_fcfs_on_few_shot_with_a_small_pool(self, seed):
        # six example sets of 160-240 tokens do not fit in 768 slots together: fcfs keeps
        # switching sets and evicts the one it needs next; lpm serves a cached set first
        lpm = simulate("few-shot", "lpm", requests=60, pool_size=768, seed=seed).stats
        fcfs = simulate("few-shot", "fcfs", requests=60, pool_size=768, seed=seed).stats
        assert lpm.hit_rate >= fcfs.hit_rate
        assert lpm.evicted_tokens <= fcfs.evicted_tokens

    def test_2442_and_418_together_let_a_fresh_shared_prompt_be_computed_fewer_times(self):
        # one 200-token prompt, computed by every request of the first batch under the
        # release; #418 caches it after that prefill and #2442 keeps most sharers for later
        plain = simulate("few-shot", "lpm", requests=200, pool_size=4096, seed=0).stats
        later = simulate("few-shot", "lpm", requests=200, pool_size=4096, seed=0,
                         delay_shared_prefix=True, cache_unfinished=True).stats
        assert later.delayed > 0
        assert later.hit_rate > plain.hit_rate
        assert later.prefill_computed < plain.prefill_computed


class TestRecords:
    def test_a_prefill_record_explains_the_batch(self):
        sched = Scheduler(1024, "lpm", seed=0)
        sched.submit(make_workload("few-shot", 12, seed=0))
        record = sched.step()
        assert record.kind == "prefill"
        assert sorted(rid for rid, _ in record.queue_order) == list(range(12))
        assert [d.rid for d in record.decisions] == [rid for rid, _ in record.queue_order][:len(record.decisions)]
        assert set(record.admitted) == {d.rid for d in record.decisions if d.admitted}
        assert set(record.running) == set(record.admitted) - set(record.finished)
        assert record.tree.total_size == sched.cache.total_size()
        assert record.refcounts == sched.pool.refcounts()
        assert record.waiting == 12 - len(record.admitted)
        assert [v.rid for v in record.running_view] == list(record.running)
        assert len(record.waiting_view) == record.waiting
        assert all(v.output_len == 1 for v in record.running_view)   # prefill samples one
        json.dumps(record.to_dict())

    def test_decode_passes_follow_a_round_that_admits_nobody(self):
        sched = Scheduler(1024, "fcfs", seed=0, decode_steps=3)
        sched.submit(make_workload("no-sharing", 30, seed=0))
        records = run_checked(sched)
        assert records[0].kind == "prefill"
        assert sum(r.computed_tokens for r in records if r.kind == "decode") == sched.stats.decode_computed
        streak = 0
        for record in records:
            streak = streak + 1 if record.kind == "decode" else 0
            if streak == 0:
                continue
            if streak % 3 == 1 and record.waiting:
                # the first decode of each group of three shows the round that admitted nobody
                assert record.decisions and not any(d.admitted for d in record.decisions)
            else:
                # the others ran without looking at the queue, as the release's loop did
                assert record.decisions == ()

    def test_same_seed_same_run(self):
        a = simulate("tree-of-thought", "random", requests=30, pool_size=600, seed=5)
        b = simulate("tree-of-thought", "random", requests=30, pool_size=600, seed=5)
        assert a.to_dict() == b.to_dict() and a.outputs == b.outputs

    def test_record_false_keeps_no_snapshots(self):
        sched = Scheduler(512, "lpm", record=False)
        sched.submit(make_workload("shared-prompt", 4))
        record = sched.step()
        assert record.tree is None and record.refcounts is None and sched.records == []


class SlotCheckingModel(FakeSampler):
    """A TokenModel that checks the slots it is handed are the ones holding each token."""

    def __init__(self, sched):
        super().__init__(0)
        self.sched, self.extends, self.decodes = sched, 0, 0

    def extend(self, tokens, prefix_slots, new_slots):
        self.extends += 1
        pool = self.sched.pool.refcounts()
        assert all(pool[s] >= 2 for s in prefix_slots.tolist())   # tree + this request
        assert all(pool[s] == 1 for s in new_slots.tolist())      # just allocated for it
        slots, _ = self.sched.cache.match_prefix(tokens[:len(prefix_slots)])
        assert slots.tolist() == prefix_slots.tolist()
        return super().extend(tokens, prefix_slots, new_slots)

    def decode(self, tokens, slots, new_slot):
        self.decodes += 1
        assert int(new_slot) not in slots.tolist()
        return super().decode(tokens, slots, new_slot)


def test_the_model_hook_gets_the_real_slots():
    sched = Scheduler(2048, "lpm", seed=0)
    sched.model = model = SlotCheckingModel(sched)
    sched.submit(make_workload("shared-prompt", 10, seed=0))
    run_checked(sched)
    assert model.extends == 10 and model.decodes == sched.stats.decode_computed


def test_the_simulation_loads_no_ui_library():
    import subprocess
    import sys
    code = ("import sys, radixviz.sim.runner, radixviz.sim.scheduler; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'textual')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_fake_sampler_is_seeded_and_in_vocabulary():
    import torch
    a, b = FakeSampler(1), FakeSampler(2)
    none = torch.empty(0, dtype=torch.int64)
    first = [a.extend(tuple(range(n)), none, torch.arange(n)) for n in range(1, 40)]
    assert first == [FakeSampler(1).extend(tuple(range(n)), none, torch.arange(n)) for n in range(1, 40)]
    assert first != [b.extend(tuple(range(n)), none, torch.arange(n)) for n in range(1, 40)]
    assert all(0 <= t < 256 for t in first) and len(set(first)) > 10
    assert a.extend("Hello", none, torch.arange(5)) in range(256)   # characters are ord()
    with pytest.raises(ValueError, match="need 5 new slots"):
        a.extend("Hello", none, torch.arange(4))
