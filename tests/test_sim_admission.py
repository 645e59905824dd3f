"""The admission rule's arithmetic: estimated room, lock first, undo if it no longer fits."""
from types import SimpleNamespace

import pytest

from radixviz.cache import TokenToKVPool, open_engine
from radixviz.sim.engines import LoopHooks   # the 2024 loop's shared match
from radixviz.sim.admission import admit, estimate_available
from radixviz.sim.request import Request
from radixviz.sim.steps import match_requests

PREFIX = tuple(range(30))


@pytest.fixture
def setup():
    """A 100-slot pool whose tree holds one unlocked 30-token prefix: 70 free, 30 evictable
    (the 2024 engine behind the facade the scheduler drives)."""
    pool = TokenToKVPool(100, device="cpu")
    engine = open_engine("2024", pool)
    engine.insert(PREFIX, pool.alloc(30))
    return pool, engine


def waiting(cache, *specs):
    """Requests from (prompt, max_new) pairs, matched against the tree."""
    queue = [Request(100 + i, tuple(p), m) for i, (p, m) in enumerate(specs)]
    match_requests(SimpleNamespace(hooks=LoopHooks(None), engine=cache, edge_memo=None), queue)
    return queue


def running_request(max_new, produced):
    req = Request(1, (200, 201), max_new)
    req.output_ids = [7] * produced
    return req


def run_admit(pool, cache, queue, running=(), ratio=0.4):
    return admit(queue, cache, pool, list(running), ratio, free_rows=8, max_prefill_tokens=1000)


class TestEstimate:
    def test_free_plus_evictable_minus_expected_tokens(self, setup):
        pool, cache = setup
        running = [running_request(20, 10), running_request(8, 3)]   # 10 + 5 still to come
        assert estimate_available(pool, cache, running, 0.4) == pytest.approx(70 + 30 - 15 * 0.4)
        assert estimate_available(pool, cache, running, 0.5) == pytest.approx(70 + 30 - 15 * 0.5)


class TestAdmit:
    def test_lock_delta_corrects_the_room(self, setup):
        pool, cache = setup
        queue = waiting(cache, (PREFIX + (99,) * 20, 10))
        admitted, [d] = run_admit(pool, cache, queue, [running_request(20, 10)])
        assert d.available == pytest.approx(96.0)        # 70 + 30 - 10 * 0.4
        assert (d.prefix_len, d.extend_len, d.lock_delta) == (30, 20, -30)
        assert d.admitted and d.reason == "fits"          # 20 + 10 + 0 < 96 - 30
        assert admitted == queue
        assert cache.evictable_size() == 0                # the prefix is locked now

    def test_admitted_prefix_slots_get_a_second_reference(self, setup):
        pool, cache = setup
        queue = waiting(cache, (PREFIX + (99,), 4))
        run_admit(pool, cache, queue)
        assert pool.refcounts()[:30] == (2,) * 30

    def test_batch_total_counts_earlier_admissions(self, setup):
        pool, cache = setup
        queue = waiting(cache, (PREFIX + (99,) * 20, 10), ((50,) * 40, 10), ((60,) * 20, 10))
        admitted, decisions = run_admit(pool, cache, queue, [running_request(20, 10)])
        # after the first: room 66, batch 30. second: 40 + 10 + 30 = 80, not < 66
        # third: 20 + 10 + 30 = 60 < 66
        assert [d.admitted for d in decisions] == [True, False, True]
        assert decisions[1].reason == "does not fit" and decisions[1].lock_delta == 0
        assert [d.batch_tokens for d in decisions] == [0, 30, 30]
        assert [r.rid for r in admitted] == [100, 102]

    def test_unlocks_when_the_lock_itself_takes_the_room(self, setup):
        pool, cache = setup
        before = pool.refcounts()
        # 40 + 30 < 96 before the lock; locking the 30-token prefix leaves 66: no longer fits
        queue = waiting(cache, (PREFIX + (99,) * 40, 30))
        admitted, [d] = run_admit(pool, cache, queue, [running_request(20, 10)])
        assert not admitted and d.lock_delta == -30
        assert d.reason == "does not fit once its prefix is locked"
        assert cache.evictable_size() == 30               # unlocked again
        assert pool.refcounts() == before                 # no reference was added

    def test_the_comparison_is_strict(self, setup):
        pool, cache = setup
        # no running requests, no prefix: room is exactly 100; 90 + 10 is not < 100
        exact = waiting(cache, ((70,) * 90, 10))
        assert run_admit(pool, cache, exact)[0] == []
        below = waiting(cache, ((70,) * 89, 10))
        assert len(run_admit(pool, cache, below)[0]) == 1

    def test_stops_at_the_number_of_free_request_rows(self, setup):
        pool, cache = setup
        queue = waiting(cache, ((1,), 1), ((2,), 1), ((3,), 1))
        admitted, decisions = admit(queue, cache, pool, [], 0.4, free_rows=2, max_prefill_tokens=1000)
        assert [r.rid for r in admitted] == [100, 101] and len(decisions) == 2

    def test_prefill_cap_limits_the_batch_input(self, setup):
        pool, cache = setup
        queue = waiting(cache, ((1,) * 10, 1), ((2,) * 10, 1))
        _admitted, decisions = admit(queue, cache, pool, [], 0.4, free_rows=8, max_prefill_tokens=15)
        assert [d.admitted for d in decisions] == [True, False]
        assert decisions[1].reason == "prefill token cap reached"
