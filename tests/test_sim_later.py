"""What SGLang changed after the first release, as simulation options: #2442's in-batch
rule (``delay_shared_prefix``), #418's insert after prefill (``cache_unfinished``) and the
hold-back rule SGLang never had. Pass-by-pass agreement with loops written in the shape of
those commits is in tests/test_sim_reference.py."""
import random
from types import SimpleNamespace

import pytest

from radixviz.cache import RadixCache, check_invariants
from radixviz.sim.engines import LoopHooks   # the 2024 loop's shared match
from radixviz.sim import Scheduler, make_workload, simulate
from radixviz.sim.policies import IN_BATCH_THRESHOLD, in_batch_deprioritized, order_queue
from radixviz.sim.request import Request, RequestSpec
from radixviz.sim.steps import match_requests

SYSTEM = tuple(range(100, 140))          # 40 tokens: longer than #2442's threshold of 32


def matched(cache, *prompts):
    queue = [Request(i, tuple(p), 4) for i, p in enumerate(prompts)]
    engine = SimpleNamespace(match=cache.match_prefix, whole_pages=lambda n: n)
    match_requests(SimpleNamespace(hooks=LoopHooks(None), engine=engine, edge_memo=None), queue)
    return queue


def rids(queue):
    return [r.rid for r in queue]


class TestInBatchRule:
    """#2442 (9208618b3e): a scratch tree built from the waiting queue alone."""

    def test_the_threshold_is_sglangs(self):
        assert IN_BATCH_THRESHOLD == 32

    def test_a_request_sharing_the_threshold_with_an_earlier_waiting_one_is_picked(self):
        queue = matched(RadixCache(), SYSTEM + (1,), (7, 8, 9), SYSTEM + (2,), SYSTEM[:31] + (3,))
        # r2 shares 40 with r0; r3 shares only 31 with anyone
        assert rids(in_batch_deprioritized(queue)) == [2]

    def test_exactly_the_threshold_counts(self):
        queue = matched(RadixCache(), SYSTEM[:32] + (1,), SYSTEM[:32] + (2,))
        assert rids(in_batch_deprioritized(queue)) == [1]

    def test_a_picked_request_is_not_added_to_the_scratch_tree(self):
        # r1 is picked (shares 40 with r0), so r2, which shares 41 with r1 only beyond r0's
        # 40, is compared with r0's prompt alone and still shares 40: picked too
        queue = matched(RadixCache(), SYSTEM + (1,), SYSTEM + (2, 5), SYSTEM + (2, 6))
        assert rids(in_batch_deprioritized(queue)) == [1, 2]

    def test_a_long_hit_in_the_real_tree_exempts_a_request_and_keeps_it_out_of_the_scratch_tree(self):
        cache = RadixCache()
        cache.insert(SYSTEM)                        # 40 cached tokens: above the threshold
        queue = matched(cache, SYSTEM + (1,), SYSTEM + (2,), (5,) * 40, (5,) * 40 + (6,))
        assert [r.prefix_len for r in queue] == [40, 40, 0, 0]
        assert rids(in_batch_deprioritized(queue)) == [3]

    def test_running_requests_are_not_looked_at(self):
        sched = Scheduler(4096, "lpm", delay_shared_prefix=True)
        sched.submit(RequestSpec(SYSTEM + (1,), 50))
        sched.step()                                 # r0 is running now
        sched.submit(RequestSpec(SYSTEM + (2,), 4))
        record = sched.step()
        assert record.admitted == (1,) and sched.stats.delayed == 0

    def test_lpm_sorts_picked_requests_last_in_queue_order(self):
        cache = RadixCache()
        cache.insert((7, 8))
        queue = matched(cache, SYSTEM + (1,), SYSTEM + (2,), (7, 8, 9), SYSTEM + (3,), (5, 5))
        last = in_batch_deprioritized(queue)
        assert rids(last) == [1, 3]
        assert rids(order_queue("lpm", queue, cache, random.Random(0), 32)) == [2, 0, 4, 1, 3]

    def test_weight_walks_without_them_and_appends_them_but_they_still_weigh(self):
        cache = RadixCache()
        for key in ((7, 8), (9, 9)):
            cache.insert(key)
        # r0, r1 and r2 end on "9 9" (weight 1 + 3 = 4), r3 on "7 8" (1 + 1 = 2). Had the
        # picked r1 and r2 stopped weighing, "9 9" would tie with "7 8" and lose the tie
        queue = matched(cache, (9, 9) + SYSTEM, (9, 9) + SYSTEM + (4,), (9, 9) + SYSTEM + (5,),
                        (7, 8, 1, 0))
        assert rids(in_batch_deprioritized(queue)) == [1, 2]
        assert rids(order_queue("weight", queue, cache, random.Random(0))) == [0, 1, 2, 3]
        assert rids(order_queue("weight", queue, cache, random.Random(0), 32)) == [0, 3, 1, 2]

    @pytest.mark.parametrize("policy", ["fcfs", "random"])
    def test_fcfs_and_random_ignore_it_as_sglang_did(self, policy):
        plain = simulate("few-shot", policy, requests=40, pool_size=2048, seed=1)
        ruled = simulate("few-shot", policy, requests=40, pool_size=2048, seed=1, delay_shared_prefix=True)
        assert ruled.stats.delayed == 0
        assert ruled.stats.to_dict() == plain.stats.to_dict()

    def test_a_picked_request_is_still_admitted_when_room_remains(self):
        # 32 requests behind one fresh 200-token prompt, 4096 slots: everyone fits in the
        # first batch, so sorting some last changes the order and nothing else
        plain = simulate("shared-prompt", "lpm", requests=32, pool_size=4096, seed=0).stats
        ruled = simulate("shared-prompt", "lpm", requests=32, pool_size=4096, seed=0,
                         delay_shared_prefix=True).stats
        assert ruled.delayed > 0
        assert ruled.hit_rate == plain.hit_rate

    def test_the_scheduler_view_marks_the_requests_it_sorted_last(self):
        sched = Scheduler(4096, "lpm", delay_shared_prefix=True)
        sched.submit([RequestSpec(SYSTEM + (i,), 4) for i in range(3)])
        record = sched.step()
        assert [(d.rid, d.sorted_last, d.admitted) for d in record.decisions] == [
            (0, False, True), (1, True, True), (2, True, True)]


class TestInsertAfterPrefill:
    """#418 (39191c8515): cache_filled_batch, later cache_unfinished_req."""

    def test_the_prompt_is_in_the_tree_while_the_request_still_runs(self):
        for on in (False, True):
            sched = Scheduler(1024, "lpm", cache_unfinished=on)
            sched.submit(RequestSpec(tuple(range(20)), 8))
            sched.step()
            assert sched.running and sched.cache.total_size() == (20 if on else 0)
            check_invariants(sched.cache, sched.pool, held=sched.held_slots())

    def test_the_lock_moves_to_the_node_ending_the_prompt(self):
        sched = Scheduler(1024, "lpm", cache_unfinished=True)
        sched.submit(RequestSpec(tuple(range(20)), 8))
        sched.step()
        (req,) = sched.running
        assert req.last_node.ref_counter == 1 and sched.cache.evictable_size() == 0

    def test_duplicates_in_one_batch_are_computed_but_go_back_to_the_pool_at_once(self):
        prompts = [RequestSpec(SYSTEM + (i,), 8) for i in range(3)]
        used = {}
        for on in (False, True):
            sched = Scheduler(1024, "lpm", cache_unfinished=on)
            sched.submit(prompts)
            record = sched.step()
            assert record.admitted == (0, 1, 2) and record.computed_tokens == 3 * 41
            used[on] = sched.pool.used_size()
            check_invariants(sched.cache, sched.pool, held=sched.held_slots())
        # the second and third request's copies of the 40 shared tokens are freed
        assert used[False] - used[True] == 2 * 40

    def test_the_next_round_hits_what_a_running_request_inserted(self):
        hits = {}
        for on in (False, True):
            sched = Scheduler(1024, "lpm", cache_unfinished=on)
            sched.submit(RequestSpec(SYSTEM + (1,), 30))
            sched.step()
            sched.submit(RequestSpec(SYSTEM + (2,), 4))
            hits[on] = sched.step().hit_tokens
        assert hits == {False: 0, True: 40}

    @pytest.mark.parametrize("workload,policy", [("few-shot", "lpm"), ("multi-turn", "weight"),
                                                 ("tree-of-thought", "fcfs")])
    def test_slots_stay_conserved_to_the_end(self, workload, policy):
        sched = Scheduler(900, policy, seed=3, cache_unfinished=True, delay_shared_prefix=True)
        sched.submit(make_workload(workload, 30, seed=3))
        while sched.step() is not None:
            check_invariants(sched.cache, sched.pool, held=sched.held_slots())
        assert sched.done and sched.pool.used_size() == sched.cache.total_size()
        assert sched.cache.evictable_size() == sched.cache.total_size()

    def test_with_pages_only_whole_pages_go_in_and_the_tail_stays_the_requests(self):
        from radixviz.engines.v2026.sim import todays_cache
        sched = Scheduler(1024, "lpm", cache_unfinished=True, cache_factory=todays_cache(page_size=4))
        sched.submit([RequestSpec(tuple(range(22)), 8), RequestSpec(tuple(range(21)) + (99,), 8)])
        sched.step()
        assert sched.cache.total_size() == 20      # five pages of 4; "20 21" stay each request's own
        while sched.step() is not None:
            sched.check_invariants()
        assert sched.pool.used_size() == sched.cache.total_size()


class TestHoldBack:
    def test_it_refuses_for_a_round_what_2442_would_only_reorder(self):
        sched = Scheduler(4096, "lpm", hold_back_shared_prefix=True)
        sched.submit([RequestSpec(SYSTEM + (i,), 4) for i in range(3)])
        record = sched.step()
        assert record.admitted == (0,)
        assert [d.reason for d in record.decisions][1:] == ["held back: shares a prefix still being computed"] * 2
        assert sched.stats.held_back == 2


def test_the_scheduler_view_says_which_requests_2442_sorted_last():
    from rich.console import Console

    from radixviz.render.scheduler import queue_lines
    sched = Scheduler(4096, "lpm", delay_shared_prefix=True)
    sched.submit([RequestSpec(SYSTEM + (i,), 4) for i in range(3)])
    _, lines = queue_lines(sched.step(), width=100)
    console = Console(width=100, color_system=None, record=True)
    for line in lines:
        console.print(line)
    rows = console.export_text().splitlines()
    admitted = [r for r in rows if r.startswith("✓") and "admitted" in r and "no room" not in r]
    assert [("sorted last (#2442)" in r) for r in admitted] == [False, True, True]
