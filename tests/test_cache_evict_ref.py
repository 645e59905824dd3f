"""Eviction, reference counting, the disabled cache and the matcher switch."""
from __future__ import annotations

import pytest
import torch

from radixviz.cache import RadixCache, TokenToKVPool, check_invariants
from reference_radix import NaiveRadixCache, engine_structure


def slots(start: int, stop: int) -> torch.Tensor:
    return torch.arange(start, stop, dtype=torch.int64)


class Recorder:
    """An evict callback that frees nothing real: it records each leaf's slots."""

    def __init__(self):
        self.calls: list = []

    def __call__(self, value) -> int:
        self.calls.append(value.tolist())
        return len(value)


def three_leaves(make=RadixCache):
    """Leaves "aaa" (slots 0-2), "bbb" (3-5), "ccc" (6-8), oldest first."""
    cache = make()
    for i, text in enumerate(["aaa", "bbb", "ccc"]):
        cache.insert(text, slots(3 * i, 3 * i + 3))
    return cache


class TestEvict:
    """Each case runs twice, with an observer and without: one eviction path, both ways."""

    @pytest.fixture(params=["untraced", "traced"])
    def make(self, request):
        def build():
            cache = RadixCache()
            if request.param == "traced":
                cache.observer = lambda event: None
            return cache
        return build

    def test_a_skipped_leaf_is_evicted_once_released(self, make):
        cache = make()
        cache.insert("aaa", slots(0, 3))
        cache.insert("bbb", slots(3, 6))
        _, node = cache.match_prefix("aaa")
        cache.inc_ref_counter(node)
        freed = Recorder()
        cache.evict(100, freed)
        assert freed.calls == [[3, 4, 5]]
        cache.dec_ref_counter(node)
        cache.evict(100, freed)
        assert freed.calls == [[3, 4, 5], [0, 1, 2]] and cache.total_size() == 0

    def test_a_leaf_whose_callback_failed_stays_evictable(self, make):
        cache = make()
        cache.insert("aaa", slots(0, 3))

        def broken(_slots):
            raise RuntimeError("pool refused")

        with pytest.raises(RuntimeError):
            cache.evict(3, broken)
        assert cache.total_size() == 3
        freed = Recorder()
        cache.evict(3, freed)
        assert freed.calls == [[0, 1, 2]]

    def test_a_lock_taken_between_evictions_is_respected(self, make):
        cache = make()
        for i, text in enumerate(["aaa", "bbb", "ccc"]):
            cache.insert(text, slots(3 * i, 3 * i + 3))
        cache.evict(1, Recorder())  # "aaa" goes
        cache.inc_ref_counter(cache.match_prefix("bbb")[1])
        cache.match_prefix("ccc")
        freed = Recorder()
        cache.evict(100, freed)
        assert freed.calls == [[6, 7, 8]]

    def test_least_recently_used_leaf_goes_first(self, make):
        cache = three_leaves(make)
        cache.match_prefix("aaa")  # now "bbb" is the oldest
        freed = Recorder()
        cache.evict(3, freed)
        assert freed.calls == [[3, 4, 5]]
        assert sorted(cache.root_node.children) == ["a", "c"]
        assert cache.evictable_size() == 6

    def test_keeps_going_until_enough_is_freed(self, make):
        cache = three_leaves(make)
        freed = Recorder()
        cache.evict(4, freed)  # one leaf is not enough: a second goes too
        assert freed.calls == [[0, 1, 2], [3, 4, 5]]

    def test_referenced_leaf_is_skipped(self, make):
        cache = three_leaves(make)
        _, node = cache.match_prefix("aaa")
        cache.inc_ref_counter(node)
        cache.match_prefix("ccc")  # the locked leaf is now older than "ccc" but "bbb" is oldest
        freed = Recorder()
        cache.evict(100, freed)
        assert freed.calls == [[3, 4, 5], [6, 7, 8]]
        assert list(cache.root_node.children) == ["a"]
        assert cache.evictable_size() == 0 and cache.total_size() == 3

    def test_parent_becoming_a_leaf_joins_the_heap(self, make):
        cache = make()
        cache.insert("abX", slots(0, 3))
        cache.insert("abY", slots(3, 6))   # splits: "ab" -> "X", "Y"
        cache.insert("zzz", slots(6, 9))   # newer than "ab", so "ab" goes before it
        freed = Recorder()
        cache.evict(100, freed)
        assert freed.calls == [[2], [5], [0, 1], [6, 7, 8]]
        assert cache.root_node.children == {} and cache.evictable_size() == 0

    def test_newer_parent_waits_for_older_leaves(self, make):
        cache = make()
        cache.insert("zzz", slots(6, 9))
        cache.insert("abX", slots(0, 3))
        cache.insert("abY", slots(3, 6))
        freed = Recorder()
        cache.evict(100, freed)
        assert freed.calls == [[6, 7, 8], [2], [5], [0, 1]]

    def test_stops_short_when_every_leaf_is_referenced(self, make):
        cache = three_leaves(make)
        for text in ("aaa", "bbb", "ccc"):
            cache.inc_ref_counter(cache.match_prefix(text)[1])
        freed = Recorder()
        cache.evict(5, freed)
        assert freed.calls == [] and cache.total_size() == 9

    def test_stops_short_when_the_tree_runs_out(self, make):
        cache = three_leaves(make)
        freed = Recorder()
        cache.evict(100, freed)
        assert len(freed.calls) == 3 and cache.total_size() == 0
        assert cache.evictable_size() == 0

    def test_empty_tree_and_zero_tokens_evict_nothing(self, make):
        freed = Recorder()
        make().evict(5, freed)
        cache = three_leaves(make)
        cache.evict(0, freed)
        assert freed.calls == [] and cache.total_size() == 9

    def test_callback_frees_the_real_pool(self, make):
        cache, pool = make(), TokenToKVPool(16, device="cpu")
        new = pool.alloc(5)
        cache.insert("hello", new)
        cache.evict(5, pool.free)
        assert pool.available_size() == 16 and cache.total_size() == 0
        check_invariants(cache, pool)

    def test_reference_evicts_the_same_slots(self, make):
        caches = [make(), NaiveRadixCache()]
        records = [Recorder(), Recorder()]
        for cache in caches:
            for i, text in enumerate(["abcd", "abef", "abeg", "xyz", "xyq", "m"]):
                cache.insert(text, slots(10 * i, 10 * i + len(text)))
            cache.match_prefix("abe")
            cache.inc_ref_counter(cache.match_prefix("xyq")[1])
        for cache, record in zip(caches, records):
            cache.evict(7, record)
        assert records[0].calls == records[1].calls
        assert engine_structure(caches[0].root_node) == caches[1].structure()


class TestReferenceCounting:
    def test_evictable_size_moves_on_create_lock_unlock_delete(self):
        cache = RadixCache()
        cache.insert("abc", slots(0, 3))
        assert cache.evictable_size() == 3                      # created
        _, node = cache.match_prefix("abc")
        assert cache.inc_ref_counter(node) == -3                # 0 -> 1
        assert cache.evictable_size() == 0 and node.ref_counter == 1
        assert cache.inc_ref_counter(node) == 0                 # 1 -> 2: no change
        assert cache.dec_ref_counter(node) == 0                 # 2 -> 1: no change
        assert cache.evictable_size() == 0
        assert cache.dec_ref_counter(node) == 3                 # 1 -> 0
        assert cache.evictable_size() == 3 and node.ref_counter == 0
        cache.evict(3, Recorder())                              # deleted
        assert cache.evictable_size() == 0

    def test_lock_walks_the_whole_path(self):
        cache = RadixCache()
        cache.insert("ab", slots(0, 2))
        cache.insert("abcd", slots(10, 14))
        cache.insert("abcdef", slots(20, 26))
        _, mid = cache.match_prefix("abcd")
        assert cache.inc_ref_counter(mid) == -4
        assert cache.evictable_size() == 2
        _, leaf = cache.match_prefix("abcdef")
        assert cache.inc_ref_counter(leaf) == -2  # only the leaf was unreferenced
        assert [n.ref_counter for n in (leaf, mid, mid.parent)] == [1, 2, 2]
        assert cache.dec_ref_counter(mid) == 0
        assert cache.dec_ref_counter(leaf) == 6
        check_invariants(cache)

    def test_locking_the_root_changes_nothing(self):
        cache = three_leaves()
        assert cache.inc_ref_counter(cache.root_node) == 0
        assert cache.dec_ref_counter(cache.root_node) == 0
        assert cache.root_node.ref_counter == 1 and cache.evictable_size() == 9

    def test_unlock_below_zero_is_refused_and_changes_nothing(self):
        cache = RadixCache()
        cache.insert("ab", slots(0, 2))
        cache.insert("abcd", slots(10, 14))
        _, mid = cache.match_prefix("ab")
        _, leaf = cache.match_prefix("abcd")
        cache.inc_ref_counter(mid)
        before = engine_structure(cache.root_node), cache.evictable_size()
        # the leaf has no reference although its parent has one: nothing may move
        with pytest.raises(ValueError, match=f"#{leaf.id}"):
            cache.dec_ref_counter(leaf)
        assert (engine_structure(cache.root_node), cache.evictable_size()) == before

    def test_evicted_node_cannot_be_locked(self):
        cache = three_leaves()
        _, node = cache.match_prefix("aaa")
        cache.evict(100, Recorder())
        with pytest.raises(ValueError, match="not in this tree"):
            cache.inc_ref_counter(node)
        with pytest.raises(ValueError, match="not in this tree"):
            RadixCache().inc_ref_counter(three_leaves().root_node.children["a"])


class TestDisabled:
    def test_match_misses_and_insert_claims_everything(self):
        cache = RadixCache(disable=True)
        assert cache.insert("abc", slots(0, 3)) == 3
        value, last = cache.match_prefix("abc")
        assert value.tolist() == [] and value.dtype == torch.int64 and last is cache.root_node
        assert cache.root_node.children == {} and cache.total_size() == 0
        assert cache.evictable_size() == 0

    def test_scheduler_frees_every_slot(self):
        cache, pool = RadixCache(disable=True), TokenToKVPool(8, device="cpu")
        new = pool.alloc(4)
        pool.free(new[:cache.insert("abcd", new)])
        assert pool.available_size() == 8

    def test_evict_raises_and_locking_the_root_is_harmless(self):
        cache = RadixCache(disable=True)
        with pytest.raises(RuntimeError):
            cache.evict(1, Recorder())
        assert cache.inc_ref_counter(cache.match_prefix("x")[1]) == 0


class TestMatcherSwitch:
    @pytest.mark.parametrize("start", [False, True])
    def test_flipping_changes_the_next_match_only(self, start):
        cache = RadixCache(buggy_match=start)
        cache.insert("Hello_L.A.!", slots(0, 11))
        cache.insert("Hello_L.A.!world", slots(11, 27))
        lengths = []
        for buggy in (not start, start, not start):
            cache.buggy_match = buggy
            lengths.append(len(cache.match_prefix("Hello_world")[0]))
        # once the fixed matcher has split "Hello_", the buggy one has nothing to misread
        expected = [11, 6, 6] if start is False else [6, 6, 6]
        assert lengths == expected

    def test_buggy_miss_then_fixed_split(self):
        cache = RadixCache(buggy_match=True)
        cache.insert("abcdef", slots(0, 6))
        cache.match_prefix("abcxyz")
        assert next(iter(cache.root_node.children.values())).key == tuple("abcdef")
        cache.buggy_match = False
        cache.match_prefix("abcxyz")
        assert next(iter(cache.root_node.children.values())).key == tuple("abc")
