"""Match, insert and split, branch by branch, in both matchers; the chapter's #7 example."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings, strategies as st

from radixviz.cache import InvariantError, RadixCache, TokenToKVPool, check_invariants, match
from reference_radix import NaiveRadixCache, common_length, engine_path_keys, engine_structure


def slots(start: int, stop: int) -> torch.Tensor:
    return torch.arange(start, stop, dtype=torch.int64)


def edges(node) -> list:
    """The edges under ``node`` as strings, in the tree's child order."""
    return ["".join(child.key) for child in node.children.values()]


def chapter_cache(buggy: bool):
    """The chapter's tree, built the way the scheduler does: alloc, insert, free duplicates."""
    cache, pool = RadixCache(buggy_match=buggy), TokenToKVPool(64, device="cpu")
    for text in ("Hello_L.A.!", "Hello_L.A.!world"):
        new = pool.alloc(len(text))
        held = cache.insert(text, new)
        pool.free(new[:held])
    return cache, pool


class TestChapterExample:
    def test_fixed_matcher_hits_hello_only_and_splits(self):
        cache, pool = chapter_cache(buggy=False)
        value, last = cache.match_prefix("Hello_world")
        assert value.tolist() == list(range(6))
        assert last.key == tuple("Hello_") and last.value.tolist() == list(range(6))
        assert edges(cache.root_node) == ["Hello_"]
        assert edges(last) == ["L.A.!"]
        check_invariants(cache, pool)

    def test_buggy_matcher_hits_eleven_with_the_other_contexts_world(self):
        cache, pool = chapter_cache(buggy=True)
        world = cache.root_node.children["H"].children["w"]
        value, last = cache.match_prefix("Hello_world")
        assert len(value) == 11
        assert value[:6].tolist() == list(range(6))
        # the last five slots are the KV of "world" after "Hello_L.A.!", another context
        assert value[6:].tolist() == world.value.tolist() == list(range(22, 27))
        assert last is world
        # and the split the fixed matcher makes never happens
        assert edges(cache.root_node) == ["Hello_L.A.!"]
        check_invariants(cache, pool)

    @pytest.mark.parametrize("buggy", [False, True])
    def test_serving_the_buggy_hit_leaves_two_nodes_on_the_same_slots(self, buggy):
        """Run "Hello_world!" as the scheduler would, trusting whatever the match returned."""
        cache, pool = chapter_cache(buggy)
        prefix, last = cache.match_prefix("Hello_world")
        cache.inc_ref_counter(last)
        pool.add_refs(prefix)
        slots = torch.cat((prefix, pool.alloc(12 - len(prefix))))
        held = cache.insert("Hello_world!", slots)
        pool.free(slots[:held])
        cache.dec_ref_counter(last)
        if not buggy:
            check_invariants(cache, pool)
            return
        # the new "world!" leaf took the other context's "world" slots as its own
        with pytest.raises(InvariantError, match="owned by both"):
            check_invariants(cache, pool)

    @pytest.mark.parametrize("buggy", [False, True])
    def test_reference_agrees(self, buggy):
        cache, _ = chapter_cache(buggy)
        ref = NaiveRadixCache(buggy_match=buggy)
        ref.insert("Hello_L.A.!", slots(0, 11))
        ref.insert("Hello_L.A.!world", slots(11, 27))
        value, last = cache.match_prefix("Hello_world")
        ref_value, ref_last = ref.match_prefix("Hello_world")
        assert value.tolist() == ref_value.tolist()
        assert engine_path_keys(cache, last) == ref.path_keys(ref_last)
        assert engine_structure(cache.root_node) == ref.structure()


class TestMatch:
    @pytest.mark.parametrize("buggy", [False, True])
    def test_no_hit_returns_empty_int64_and_root(self, buggy):
        cache = RadixCache(buggy_match=buggy)
        cache.insert("abc", slots(0, 3))
        value, last = cache.match_prefix("xyz")
        assert value.dtype == torch.int64 and value.tolist() == []
        assert last is cache.root_node

    def test_on_an_empty_tree(self):
        cache = RadixCache()
        value, last = cache.match_prefix("abc")
        assert value.tolist() == [] and last is cache.root_node

    @pytest.mark.parametrize("key", ["", (), []])
    def test_empty_key_touches_only_the_root(self, key):
        cache = RadixCache()
        cache.insert("abc", slots(0, 3))
        child = cache.root_node.children["a"]
        before = child.last_access_time
        value, last = cache.match_prefix(key)
        assert value.tolist() == [] and last is cache.root_node
        assert child.last_access_time == before
        assert cache.root_node.last_access_time > before

    @pytest.mark.parametrize("buggy", [False, True])
    def test_whole_edges_descend_and_refresh_each_node_in_order(self, buggy):
        cache = RadixCache(buggy_match=buggy)
        cache.insert("abc", slots(0, 3))
        cache.insert("abcde", slots(10, 15))
        value, last = cache.match_prefix("abcdefg")
        assert value.tolist() == [0, 1, 2, 13, 14]
        assert last.key == tuple("de")
        mid = last.parent
        # each step down takes the next tick, from the root to the last node
        assert cache.root_node.last_access_time + 1 == mid.last_access_time
        assert mid.last_access_time + 1 == last.last_access_time == cache.snapshot().clock

    @pytest.mark.parametrize("buggy", [False, True])
    def test_query_ending_inside_an_edge_splits_there(self, buggy):
        cache = RadixCache(buggy_match=buggy)
        cache.insert("abcdef", slots(0, 6))
        value, last = cache.match_prefix("abc")
        assert value.tolist() == [0, 1, 2]
        assert last.key == tuple("abc") and edges(last) == ["def"]
        assert last.children["d"].value.tolist() == [3, 4, 5]
        assert cache.total_size() == 6 and cache.evictable_size() == 6

    def test_fixed_matcher_splits_where_the_query_forks_and_stops(self):
        cache = RadixCache()
        cache.insert("abcdef", slots(0, 6))
        cache.insert("abcdefxyz", slots(10, 19))
        value, last = cache.match_prefix("abcQxyz")
        assert value.tolist() == [0, 1, 2]
        assert last.key == tuple("abc") and edges(last) == ["def"]

    def test_buggy_matcher_takes_part_of_the_edge_and_walks_on(self):
        cache = RadixCache(buggy_match=True)
        cache.insert("abcdef", slots(0, 6))
        cache.insert("abcdefxyz", slots(10, 19))
        value, last = cache.match_prefix("abcxy")
        # "abc" of the edge, then the rest of the query ("xy") against its children:
        # a hit in another context
        assert value.tolist() == [0, 1, 2, 16, 17]
        # the grandchild "xyz" is split where this query ended, "abcdef" never is
        assert last.key == tuple("xy")
        assert edges(cache.root_node) == ["abcdef"]

    def test_buggy_matcher_returns_the_unsplit_child_when_nothing_below_matches(self):
        cache = RadixCache(buggy_match=True)
        cache.insert("abcdef", slots(0, 6))
        value, last = cache.match_prefix("abcQ")
        assert value.tolist() == [0, 1, 2]
        assert last.key == tuple("abcdef")
        assert edges(cache.root_node) == ["abcdef"]

    def test_keys_may_be_token_ids(self):
        cache = RadixCache()
        cache.insert([7, 8, 9], slots(0, 3))
        assert cache.match_prefix((7, 8, 5))[0].tolist() == [0, 1]
        assert cache.match_prefix(range(7, 10))[0].tolist() == [0, 1, 2]


class TestInsert:
    def test_new_key_creates_a_leaf_and_returns_zero(self):
        cache = RadixCache()
        assert cache.insert("abc", slots(0, 3)) == 0
        node = cache.root_node.children["a"]
        assert node.key == tuple("abc") and node.parent is cache.root_node
        assert node.value.tolist() == [0, 1, 2] and node.ref_counter == 0
        assert cache.evictable_size() == cache.total_size() == 3

    def test_fully_held_key_returns_its_length_and_leaves_the_child_untouched(self):
        cache = RadixCache()
        cache.insert("abc", slots(0, 3))
        node = cache.root_node.children["a"]
        stamp = node.last_access_time
        assert cache.insert("abc", slots(10, 13)) == 3
        assert node.value.tolist() == [0, 1, 2]  # the tree keeps its own slots
        assert node.last_access_time == stamp     # the release returns before visiting it
        assert cache.total_size() == 3

    def test_extending_key_hangs_the_rest_below(self):
        cache = RadixCache()
        cache.insert("abc", slots(0, 3))
        assert cache.insert("abcde", slots(10, 15)) == 3
        node = cache.root_node.children["a"]
        assert edges(node) == ["de"] and node.children["d"].value.tolist() == [13, 14]
        assert cache.evictable_size() == 5

    def test_forking_key_splits_the_edge(self):
        cache = RadixCache()
        cache.insert("abcde", slots(0, 5))
        assert cache.insert("abxy", slots(10, 14)) == 2
        mid = cache.root_node.children["a"]
        assert mid.key == tuple("ab") and mid.value.tolist() == [0, 1]
        assert edges(mid) == ["cde", "xy"]
        assert mid.children["x"].value.tolist() == [12, 13]
        assert cache.total_size() == cache.evictable_size() == 7

    def test_key_ending_inside_an_edge_splits_without_a_new_leaf(self):
        cache = RadixCache()
        cache.insert("abcde", slots(0, 5))
        assert cache.insert("abc", slots(10, 13)) == 3
        mid = cache.root_node.children["a"]
        assert mid.key == tuple("abc") and edges(mid) == ["de"]
        assert cache.total_size() == 5

    def test_empty_key_holds_nothing(self):
        cache = RadixCache()
        assert cache.insert("", slots(0, 0)) == 0
        assert cache.root_node.children == {}

    def test_value_none_stores_the_token_codes(self):
        cache = RadixCache()
        cache.insert("ab")
        cache.insert([5, 6])
        assert cache.match_prefix("ab")[0].tolist() == [ord("a"), ord("b")]
        assert cache.match_prefix([5, 6])[0].tolist() == [5, 6]

    @pytest.mark.parametrize("value", [slots(0, 2), [1.5, 2.5, 3.5], torch.zeros(3, 1, dtype=torch.int64)])
    def test_bad_value_is_refused_and_changes_nothing(self, value):
        cache = RadixCache()
        cache.insert("abc", slots(0, 3))
        before = engine_structure(cache.root_node), cache.snapshot().clock
        with pytest.raises((ValueError, TypeError)):
            cache.insert("abcdef", value)
        assert (engine_structure(cache.root_node), cache.snapshot().clock) == before

    def test_insert_times_follow_the_release(self):
        cache = RadixCache()                  # root built at tick 1
        cache.insert("abc", slots(0, 3))      # root visited at 2, leaf built at 3
        assert cache.root_node.last_access_time == 2
        assert cache.root_node.children["a"].last_access_time == 3
        cache.insert("abd", slots(3, 6))      # root 4, split node built 5, visited 6, leaf 7
        mid = cache.root_node.children["a"]
        assert (cache.root_node.last_access_time, mid.last_access_time) == (4, 6)
        assert mid.children["c"].last_access_time == 3
        assert mid.children["d"].last_access_time == 7


class TestSplit:
    def test_split_node_inherits_the_reference_count(self):
        cache = RadixCache()
        cache.insert("abcdef", slots(0, 6))
        _, leaf = cache.match_prefix("abcdef")
        cache.inc_ref_counter(leaf)
        cache.inc_ref_counter(leaf)
        _, mid = cache.match_prefix("abc")
        assert mid.ref_counter == 2 and leaf.ref_counter == 2 and leaf.parent is mid
        assert cache.evictable_size() == 0
        # the original lock still releases the whole path, split or not
        cache.dec_ref_counter(leaf), cache.dec_ref_counter(leaf)
        assert mid.ref_counter == 0 and cache.evictable_size() == 6
        check_invariants(cache)

    def test_split_node_moves_to_the_end_of_its_siblings(self):
        cache, ref = RadixCache(), NaiveRadixCache()
        for cache_ in (cache, ref):
            for i, text in enumerate(["abc", "bcd", "cde"]):
                cache_.insert(text, slots(3 * i, 3 * i + 3))
            cache_.match_prefix("ab")
        assert edges(cache.root_node) == ["bcd", "cde", "ab"]
        assert engine_structure(cache.root_node) == ref.structure()

    def test_split_keeps_the_lower_node_and_its_children(self):
        cache = RadixCache()
        cache.insert("abcd", slots(0, 4))
        cache.insert("abcdxy", slots(10, 16))
        lower = cache.root_node.children["a"]
        _, mid = cache.match_prefix("ab")
        assert lower.parent is mid and lower.key == tuple("cd") and lower.value.tolist() == [2, 3]
        assert edges(lower) == ["xy"] and lower.children["x"].parent is lower


class TestCompare:
    """The engine's one comparison (slices and bisection) against a token-by-token count."""

    @settings(max_examples=300, deadline=None)
    @given(data=st.data(), shared=st.integers(0, 300))
    def test_same_common_length_as_counting_tokens(self, data, shared):
        tokens = st.integers(0, 2)
        stem = tuple(data.draw(st.lists(tokens, min_size=shared, max_size=shared)))
        edge = stem + tuple(data.draw(st.lists(tokens, max_size=40)))
        lead = tuple(data.draw(st.lists(tokens, max_size=5)))
        query = lead + stem + tuple(data.draw(st.lists(tokens, max_size=40)))
        # usually aligned on the shared stem, so long common prefixes come up
        start = data.draw(st.one_of(st.just(len(lead)), st.integers(0, len(query))))
        assert match(edge, query, start) == common_length(edge, query[start:])
