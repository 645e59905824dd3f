"""The 2026 engine's behaviour, fact by fact, as a careful reading of SGLang's file shows it."""
from __future__ import annotations

import sys

import pytest
import torch

from radixviz.cache import ModernRadixCache, check_modern_invariants


def slots(n, start=100):
    return torch.arange(start, start + n, dtype=torch.int64)


def child(node, text):
    """The child of ``node`` whose edge starts with ``text``'s first token."""
    return next(c for c in node.children.values() if c.key[0] == text[0])


def test_clock_one_read_per_operation_and_two_per_new_node():
    cache = ModernRadixCache()
    root = cache.root_node
    assert (root.last_access_time, root.creation_time) == (1, 2)
    cache.insert("abcd", slots(4))          # op reads 3; the leaf reads 4 then 5
    leaf = child(root, "a")
    assert (root.last_access_time, leaf.last_access_time, leaf.creation_time) == (3, 4, 5)
    cache.insert("abxy", slots(4, 200))     # op reads 6; split upper 7, 8; new leaf 9, 10
    upper = child(root, "a")
    lower, new_leaf = child(upper, "c"), child(upper, "x")
    assert lower is leaf                    # the existing object keeps the lower part
    assert lower.last_access_time == 6 and lower.creation_time == 5
    assert (upper.last_access_time, upper.creation_time) == (7, 8)
    assert (new_leaf.last_access_time, new_leaf.creation_time) == (9, 10)
    assert new_leaf.last_access_time > lower.last_access_time   # siblings, strictly ordered
    cache.match_prefix("abc")               # one read (11) for the whole path, no split
    assert root.last_access_time == upper.last_access_time == lower.last_access_time == 11
    assert new_leaf.last_access_time == 9


def test_match_stopping_mid_edge_splits_and_refreshes_the_lower_part():
    cache = ModernRadixCache()
    cache.insert("abcd", slots(4))
    leaf = child(cache.root_node, "a")
    found, node = cache.match_prefix("abz")    # reads 6; the split's upper part reads 7, 8
    assert found.tolist() == [100, 101] and node.key == ("a", "b")
    assert node.children == {"c": leaf} and leaf.key == ("c", "d")
    assert leaf.last_access_time == 6 and node.last_access_time == 7
    assert node.hit_count == leaf.hit_count == 1   # copied, not raised


def test_paged_match_cuts_the_key_to_whole_pages_and_compares_pages():
    cache = ModernRadixCache(page_size=4)
    cache.insert("abcdefgh", slots(8))
    clock = cache.snapshot().clock
    found, node = cache.match_prefix("abc")     # shorter than a page: root, nothing touched
    assert found.numel() == 0 and node is cache.root_node and cache.snapshot().clock == clock
    found, node = cache.match_prefix("abcdefgX")  # second page differs in its last token
    assert found.tolist() == [100, 101, 102, 103] and node.key == tuple("abcd")
    assert tuple(node.children) == (tuple("efgh"),)   # children filed under their first page
    found, _ = cache.match_prefix("abcdefghij")       # the partial tail "ij" is dropped
    assert len(found) == 8


def test_insert_refuses_partial_pages_and_changes_nothing():
    cache = ModernRadixCache(page_size=4)
    cache.insert("abcd", slots(4))
    clock = cache.snapshot().clock
    with pytest.raises(ValueError, match="whole pages"):
        cache.insert("abcdef", slots(6))
    assert cache.snapshot().clock == clock and cache.total_size() == 4


def test_hit_count_is_raised_by_inserts_only():
    cache = ModernRadixCache()
    cache.insert("abcd", slots(4))
    leaf = child(cache.root_node, "a")
    assert leaf.hit_count == 1
    _, node = cache.match_prefix("abcd")
    cache.inc_lock_ref(node)
    assert leaf.hit_count == 1
    cache.insert("abcd", slots(4, 300))
    assert leaf.hit_count == 2
    cache.insert("abxy", slots(4, 400))        # split: upper copies 2 and is raised to 3
    upper = child(cache.root_node, "a")
    assert (upper.hit_count, leaf.hit_count, child(upper, "x").hit_count) == (3, 2, 1)
    assert cache.root_node.hit_count == 0


def test_priority_is_the_max_along_the_insert_path_and_match_leaves_it():
    cache = ModernRadixCache(eviction_policy="priority")
    assert cache.root_node.priority == -sys.maxsize
    cache.insert("abcd", slots(4), priority=1)
    cache.insert("abxy", slots(4, 200), priority=5)
    upper = child(cache.root_node, "a")
    assert (cache.root_node.priority, upper.priority) == (5, 5)
    assert child(upper, "c").priority == 1 and child(upper, "x").priority == 5
    cache.insert("abcd", slots(4, 300), priority=0)   # max keeps the higher value
    cache.match_prefix("ab")
    assert upper.priority == 5 and child(upper, "c").priority == 1


def test_locks_count_key_lengths_going_zero_to_one_and_survive_a_split():
    cache = ModernRadixCache()
    cache.insert("abcd", slots(4))
    _, leaf = cache.match_prefix("abcd")
    assert cache.inc_lock_ref(leaf) == -4 and cache.protected_size() == 4
    assert cache.inc_lock_ref(leaf) == 0            # already locked: no change
    cache.insert("abxy", slots(4, 200))             # splits the locked edge
    upper = leaf.parent
    assert upper.lock_ref == 2 and cache.evictable_size() == 2 and cache.protected_size() == 4
    assert cache.dec_lock_ref(leaf) == 0
    assert cache.dec_lock_ref(leaf) == 4            # both halves go 1 -> 0
    check_modern_invariants(cache)
    with pytest.raises(ValueError, match="no lock"):
        cache.dec_lock_ref(leaf)
    assert cache.evictable_size() == 6 and cache.protected_size() == 0   # ab, cd, xy


def test_eviction_calls_back_once_per_node_in_policy_order_and_pushes_parents():
    cache = ModernRadixCache()
    cache.insert("ab", slots(2, 10))
    cache.insert("abcd", slots(4, 20))          # "cd" hangs under "ab"
    cache.insert("xy", slots(2, 30))
    cache.match_prefix("xy")                    # "xy" is now the most recent
    freed = []
    clock = cache.snapshot().clock
    assert cache.evict(3, lambda s: freed.append(s.tolist())) == 4
    # "cd" goes first; its parent "ab" becomes a leaf, older than "xy", and goes next
    assert freed == [[22, 23], [10, 11]] and cache.snapshot().clock == clock
    assert cache.evict(100, lambda s: freed.append(s.tolist())) == 2   # stops short: tree empty
    assert cache.total_size() == 0


@pytest.mark.parametrize("policy, first", [("lru", "a"), ("lfu", "c"), ("mru", "b"), ("fifo", "a"),
                                           ("filo", "c"), ("slru", "c"), ("priority", "b")])
def test_each_policy_picks_its_own_first_leaf(policy, first):
    cache = ModernRadixCache(eviction_policy=policy)
    for start in (1, 4, 7):
        cache.insert("a", slots(1, start), priority=1)   # a: oldest, hit three times
    cache.insert("b", slots(1, 2), priority=0)          # b: lowest priority
    cache.insert("c", slots(1, 3), priority=1)          # c: newest node, one hit
    cache.match_prefix("b")                              # b: the most recently used
    freed = []
    cache.evict(1, lambda s: freed.append(s.tolist()))
    assert freed == [[{"a": 1, "b": 2, "c": 3}[first]]]


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="unknown eviction policy"):
        ModernRadixCache(eviction_policy="random")
    with pytest.raises(ValueError, match="page_size"):
        ModernRadixCache(page_size=0)
    cache = ModernRadixCache()
    cache.insert("ab", slots(2))
    _, node = cache.match_prefix("ab")
    cache.evict(2, lambda s: None)
    with pytest.raises(ValueError, match="not in this tree"):
        cache.inc_lock_ref(node)


def test_switching_policy_reorders_the_same_candidates():
    cache = ModernRadixCache()
    for start, text in enumerate("abcd"):
        cache.insert(text, slots(1, start))
    cache.match_prefix("b")
    cache.set_eviction_policy("mru")
    freed = []
    cache.evict(2, lambda s: freed.extend(s.tolist()))
    assert freed == [1, 3]            # b (just matched), then d (the newest insert)
    cache.set_eviction_policy("FIFO")
    cache.evict(1, lambda s: freed.extend(s.tolist()))
    assert freed[-1] == 0 and cache.eviction_policy == "fifo"
    check_modern_invariants(cache)
