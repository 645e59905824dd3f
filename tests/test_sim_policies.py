"""The order each policy offers places in, on queues built by hand against a small tree."""
import random
from types import SimpleNamespace

import pytest

from radixviz.cache import RadixCache
from radixviz.sim.engines import LoopHooks   # the 2024 loop's shared match
from radixviz.sim.policies import POLICIES, get_policy, order_queue
from radixviz.sim.request import Request
from radixviz.sim.steps import match_requests


def matched_queue(cache, *prompts):
    """Requests r0, r1, ... for ``prompts``, matched against ``cache`` as a prefill round does."""
    queue = [Request(i, tuple(p), 4) for i, p in enumerate(prompts)]
    engine = SimpleNamespace(match=cache.match_prefix, whole_pages=lambda n: n)
    match_requests(SimpleNamespace(hooks=LoopHooks(None), engine=engine, edge_memo=None), queue)
    return queue


def rids(queue):
    return [r.rid for r in queue]


@pytest.fixture
def small_tree():
    """root -> "q", root -> "xyz" -> {"1", "2"}."""
    cache = RadixCache()
    for key in ("xyz1", "xyz2", "q"):
        cache.insert(key)
    return cache


# r0 ends on "q", r1 on "1", r2 and r3 on "2", r4 on "xyz", r5 on the root
PROMPTS = ("q9", "xyz1k", "xyz2k", "xyz2m", "xyzw", "zzz")


class TestOrders:
    def test_prefix_lengths_seen_by_the_policies(self, small_tree):
        queue = matched_queue(small_tree, *PROMPTS)
        assert [r.prefix_len for r in queue] == [1, 4, 4, 4, 3, 0]

    def test_fcfs_keeps_arrival_order(self, small_tree):
        queue = matched_queue(small_tree, *PROMPTS)
        assert rids(order_queue("fcfs", queue, small_tree, random.Random(0))) == [0, 1, 2, 3, 4, 5]

    def test_lpm_longest_prefix_first_ties_in_arrival_order(self, small_tree):
        queue = matched_queue(small_tree, *PROMPTS)
        assert rids(order_queue("lpm", queue, small_tree, random.Random(0))) == [1, 2, 3, 4, 0, 5]

    def test_weight_goes_depth_first_heaviest_subtree_first(self, small_tree):
        # weights (1 per node + its requests + children): "2"=3, "1"=2, "xyz"=7, "q"=2;
        # the subtree of "xyz" first, inside it "2" before "1", each node's own requests
        # after its children, the root's request last
        queue = matched_queue(small_tree, *PROMPTS)
        assert rids(order_queue("weight", queue, small_tree, random.Random(0))) == [2, 3, 1, 4, 0, 5]

    def test_weight_counts_a_node_itself(self):
        # "a" has one request and two childless children; "b" has two requests; counting
        # each node as 1 makes "a" (1 + 1 + 1 + 1 = 4) heavier than "b" (1 + 2 = 3)
        cache = RadixCache()
        for key in ("a1", "a2", "b"):
            cache.insert(key)
        queue = matched_queue(cache, "bx", "by", "ax")
        assert rids(order_queue("weight", queue, cache, random.Random(0))) == [2, 0, 1]

    def test_random_is_a_seeded_permutation(self, small_tree):
        queue = matched_queue(small_tree, *PROMPTS)
        first = rids(order_queue("random", queue, small_tree, random.Random(7)))
        again = rids(order_queue("random", queue, small_tree, random.Random(7)))
        other = rids(order_queue("random", queue, small_tree, random.Random(8)))
        assert first == again
        assert sorted(first) == [0, 1, 2, 3, 4, 5]
        assert first != other

    def test_policies_do_not_change_the_queue_they_are_given(self, small_tree):
        queue = matched_queue(small_tree, *PROMPTS)
        for name in POLICIES:
            order_queue(name, queue, small_tree, random.Random(0))
            assert rids(queue) == [0, 1, 2, 3, 4, 5], name


class TestTable:
    def test_estimation_ratios(self):
        assert {name: get_policy(name)[1] for name in POLICIES} == {
            "lpm": 0.4, "fcfs": 0.5, "random": 0.4, "weight": 0.4}

    def test_unknown_policy_names_the_choices(self):
        with pytest.raises(ValueError, match="lpm, fcfs, random, weight"):
            get_policy("sjf")
