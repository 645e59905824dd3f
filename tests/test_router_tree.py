"""The cache-aware router's approximate tree and the routers' decisions, case by case."""
from __future__ import annotations

import pytest

from radixviz.sim.router_tree import ApproxTree
from radixviz.sim.routers import LIBRARY_DEFAULTS, Load, RouterConfig, make_router


def loads(*requests):
    return [Load(r, r * 100) for r in requests]


def test_the_tree_names_the_worker_a_prompt_went_to_and_counts_a_partial_edge():
    tree = ApproxTree()
    for w in range(3):
        tree.add_tenant(w)
    tree.insert(tuple("abcdef"), 1)
    tree.insert(tuple("abcxyz"), 2)
    found = tree.prefix_match(tuple("abcdeQ"))
    assert (found.matched, found.tenant, found.length) == (5, 1, 6)
    found = tree.prefix_match(tuple("abQ"))
    # 'abc' was split off 'abcdef' (created by worker 1, which keeps the name) and holds 1 and 2
    assert (found.matched, found.tenant) == (2, 1)
    assert tree.prefix_match(tuple("xyz")).matched == 0
    assert tree.size == {0: 0, 1: 6, 2: 6}
    assert tree.matched_per_tenant(tuple("abcxy")) == {0: 0, 1: 3, 2: 5}


def test_a_tenant_reaching_a_node_first_gets_its_length_and_no_stamp():
    tree = ApproxTree()
    tree.insert(tuple("abc"), 0)
    tree.insert(tuple("abcd"), 1)      # walks through 'abc': worker 1 now holds it too
    assert tree.size == {0: 3, 1: 4}
    node = tree.root.children["a"]
    assert node.tenants[0] > 0 and node.tenants[1] == 0


def test_eviction_forgets_the_oldest_leaves_of_a_tenant_over_its_size_only():
    tree = ApproxTree()
    tree.insert(tuple("aaaa"), 0)
    tree.insert(tuple("bbbb"), 0)
    tree.insert(tuple("cccc"), 0)
    tree.insert(tuple("dddd"), 1)
    assert tree.evict_by_size(8) == 4      # worker 0 had 12: its oldest leaf 'aaaa' goes
    assert tree.prefix_match(tuple("aaaa")).matched == 0
    assert tree.prefix_match(tuple("bbbb")).tenant == 0
    assert tree.size == {0: 8, 1: 4}
    assert tree.evict_by_size(8) == 0


def test_round_robin_random_and_least_load():
    rr = make_router("round-robin", 3)
    assert [rr.route((), loads(0, 0, 0)).worker for _ in range(5)] == [0, 1, 2, 0, 1]
    least = make_router("least-load", 3)
    assert least.route((), loads(4, 2, 2)).worker == 1          # the first of the tied minimum
    rand = make_router("random", 4, seed=3)
    again = make_router("random", 4, seed=3)
    assert [rand.route((), loads(0, 0, 0, 0)).worker for _ in range(8)] == \
        [again.route((), loads(0, 0, 0, 0)).worker for _ in range(8)]


@pytest.mark.parametrize("config, share", [(LIBRARY_DEFAULTS, "abcdWXYZ"), (RouterConfig(), "abcWXYZV")],
                         ids=["library-0.5", "launched-0.3"])
def test_cache_aware_follows_the_cache_above_the_threshold_only(config, share):
    router = make_router("cache-aware", 2, config)
    first = router.route(tuple("abcdefgh"), loads(0, 0))
    assert (first.worker, first.reason) == (0, "low-match")      # nobody holds it: least loaded
    hit = router.route(tuple("abcdefXY"), loads(1, 0))
    assert (hit.worker, hit.reason, hit.matched) == (0, "cache", 6)   # 6/8 = 75% > either threshold
    # 4/8 = 50% is not above 0.5; 3/8 = 37.5% is above 0.3 (launched), 2/8 = 25% is not
    edge = router.route(tuple(share), loads(2, 0))
    assert (edge.worker, edge.reason) == ((1, "low-match") if config is LIBRARY_DEFAULTS else (0, "cache"))
    low = router.route(tuple("abXYZWVU"), loads(3, 0))
    assert (low.worker, low.reason) == (1, "low-match")


def test_imbalance_needs_both_the_absolute_and_the_relative_gap():
    config = RouterConfig(balance_abs_threshold=4, balance_rel_threshold=1.5)
    router = make_router("cache-aware", 2, config)
    router.route(tuple("abcdefgh"), loads(0, 0))
    assert router.route(tuple("abcdefgh"), loads(5, 0)).reason == "imbalanced"   # 5 > 4 and 5 > 0
    assert router.route(tuple("abcdefgh"), loads(14, 10)).reason == "cache"      # 4 is not > 4
    assert router.route(tuple("abcdefgh"), loads(20, 14)).reason == "cache"      # 20 < 1.5 x 14
    moved = router.route(tuple("abcdefgh"), loads(22, 14))                        # 8 > 4, 22 > 21
    assert (moved.reason, moved.worker) == ("imbalanced", 1)


def test_the_2024_router_sent_a_weak_match_to_the_smallest_tree():
    router = make_router("cache-aware", 2, RouterConfig(low_match="smallest-tree"))
    router.route(tuple("aaaaaaaa"), loads(0, 0))                 # worker 0 (both empty: the first)
    decision = router.route(tuple("bbbbbbbb"), loads(0, 9))      # worker 1: smaller tree, more load
    assert (decision.worker, decision.reason) == (1, "low-match")
    with pytest.raises(ValueError, match="low_match"):
        make_router("cache-aware", 2, RouterConfig(low_match="nearest"))
