"""The unified engine's rules, each on a small tree a learner could draw: the SWA window a match
needs and the tombstone that breaks it, a tombstone restored by an insert inside its window,
the window lock, Mamba states (reuse only where one was kept, the branching point, the copy),
the eviction cascade, page sizes, and bad calls refused with nothing changed."""
from __future__ import annotations

import pytest
import torch

from radixviz.engines.unified.cache import UnifiedRadixCache
from radixviz.engines.unified.cache_params import (DecLockRefParams, EvictParams, InsertParams,
                                                   MatchPrefixParams, Req)
from radixviz.engines.unified.invariants import check_unified_invariants
from radixviz.engines.unified.node import ComponentType as CT


def insert(cache: UnifiedRadixCache, key: str, prefix: int = 0, prefix_slots=None, evicted: int = 0):
    """A request's insert: the matched prefix's slots, fresh ones for the rest, a fresh state."""
    own = cache.token_to_kv_pool_allocator.alloc(len(key) - prefix)
    value = own if prefix_slots is None else torch.cat([prefix_slots, own])
    params = InsertParams(key=key, value=value, prev_prefix_len=prefix)
    if cache.mamba_pool is not None:
        params.mamba_value = cache.mamba_pool.alloc(1)
    if evicted:
        cache.token_to_kv_pool_allocator.free_swa_segment(own[:evicted - prefix])
        params.set_evicted_seqlen(CT.SWA, evicted)
    result = cache.insert(params)
    if result.mamba_exist:
        cache.mamba_pool.free(params.mamba_value)
    check_unified_invariants(cache, held={})
    return result


def edges(cache) -> list:
    """Each node's edge and which components hold data there ('-' marks a tombstone)."""
    out, stack = [], [(cache.root_node, "")]
    while stack:
        node, path = stack.pop()
        for child in node.children.values():
            held = "".join(str(ct)[0] if child.component_data[ct].value is not None else "-"
                           for ct in cache.tree_components)
            out.append(("".join(child.key), held))
            stack.append((child, path + "".join(child.key)))
    return sorted(out)


class TestSlidingWindow:
    def cache(self):
        return UnifiedRadixCache(components="full,swa", sliding_window_size=4, kv_size=64)

    def test_a_long_leaf_is_cut_so_its_tail_is_one_window(self):
        cache = self.cache()
        insert(cache, "abcdefghij")
        assert edges(cache) == [("abcdef", "fs"), ("ghij", "fs")]

    def test_a_tombstone_breaks_the_window_a_match_needs(self):
        cache = self.cache()
        insert(cache, "abcdefghij")
        got = cache.evict(EvictParams(swa_num_tokens=6))
        assert (got.num_tokens_evicted, got.swa_num_tokens_evicted) == (0, 6)
        assert edges(cache) == [("abcdef", "f-"), ("ghij", "fs")]  # the node stays, its SWA KV gone
        # "ghij" alone covers the window: the whole prefix is reused
        assert cache.match_prefix("abcdefghij").device_prefix_len == 10
        # two tokens after the tombstone are not a window: nothing is reused
        short = cache.match_prefix("abcdefgh")
        assert short.device_prefix_len == 0 and short.full_kv_hit_length == 8
        assert short.stop.refused == (CT.SWA,) and "2 of the 4" in dict(short.stop.reasons)[CT.SWA]
        assert short.swa_branching_seqlen == 8
        check_unified_invariants(cache, held={})

    def test_an_insert_inside_the_window_restores_a_tombstone(self):
        cache = self.cache()
        insert(cache, "abcdefghij")
        cache.evict(EvictParams(swa_num_tokens=6))
        full_free = cache.token_to_kv_pool_allocator.full_available_size()
        result = insert(cache, "abcdefXY")
        assert result.prefix_len == 6
        assert ("abcdef", "fs") in edges(cache)
        # the request's 6 slots replaced the node's; the old 6 went back (the SWA side was gone)
        assert cache.token_to_kv_pool_allocator.full_available_size() == full_free - 8 + 6
        assert cache.match_prefix("abcdefXY").device_prefix_len == 8

    def test_an_insert_whose_window_moved_on_keeps_the_tombstone(self):
        cache = self.cache()
        insert(cache, "abcdefghij")
        cache.evict(EvictParams(swa_num_tokens=6))
        insert(cache, "abcdefXYZW", evicted=8)  # its own SWA KV below 8 is gone
        assert ("abcdef", "f-") in edges(cache)

    def test_a_lock_holds_one_window(self):
        cache = self.cache()
        insert(cache, "abcdefghij")
        node = cache.match_prefix("abcdefgh").last_visited_node_id  # splits "ghij" at "gh"
        leaf = cache.match_prefix("abcdefghij").best_match_node
        receipt = cache.inc_lock_ref(leaf)
        swa_locks = {"".join(n.key): n.component_data[CT.SWA].lock_ref for n in walk(cache)}
        full_locks = {"".join(n.key): n.component_data[CT.FULL].lock_ref for n in walk(cache)}
        assert swa_locks == {"abcdef": 0, "gh": 1, "ij": 1}
        assert full_locks == {"abcdef": 1, "gh": 1, "ij": 1}
        assert receipt.component_lock_uuids[CT.SWA] == cache.resolve_node_handle(node).component_data[CT.SWA].uuid
        assert cache.swa_protected_size() == 4 and cache.protected_size() == 10
        cache.dec_lock_ref(leaf, receipt.to_dec_params())
        assert cache.swa_protected_size() == 0 and cache.protected_size() == 0


def walk(cache):
    stack = list(cache.root_node.children.values())
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())


class TestMamba:
    def cache(self, chunk: int = 4):
        return UnifiedRadixCache(components="full,mamba", mamba_cache_chunk_size=chunk, kv_size=64, mamba_size=8)

    def test_reuse_starts_only_where_a_state_was_kept(self):
        cache = self.cache()
        insert(cache, "abcdefgh")
        assert cache.match_prefix("abcdefgh").device_prefix_len == 8
        miss = cache.match_prefix("abcdefxy")
        assert miss.device_prefix_len == 0 and miss.full_kv_hit_length == 6
        assert miss.stop.refused == (CT.MAMBA,)
        assert miss.mamba_branching_seqlen == 4  # the last state-spacing point of the Full hit
        assert edges(cache) == [("abcdef", "f-"), ("gh", "fm")]  # the split prefix has no state

    def test_a_state_kept_at_the_branching_point_is_reused(self):
        cache = self.cache()
        insert(cache, "abcdefgh")
        cache.match_prefix("abcdefxy")
        result = insert(cache, "abcd", prefix=0)
        assert result.prefix_len == 4 and not result.mamba_exist
        assert ("abcd", "fm") in edges(cache)
        assert cache.match_prefix("abcdxyz").device_prefix_len == 4

    def test_a_match_hands_the_request_a_copy_of_the_state(self):
        cache = self.cache()
        insert(cache, "abcdefgh")
        leaf = cache.resolve_node_handle(cache.match_prefix("abcdefgh").best_match_node)
        source = leaf.component_data[CT.MAMBA].value
        cache.mamba_pool.states[source] = torch.tensor([1.0, 2.0, 3.0, 4.0])
        req = Req()
        cache.match_prefix(MatchPrefixParams(tuple("abcdefgh"), cow_mamba=True, req=req))
        assert req.mamba_pool_idx is not None and int(req.mamba_pool_idx) != int(source)
        assert torch.equal(cache.mamba_pool.states[int(req.mamba_pool_idx)], cache.mamba_pool.states[int(source)])
        cache.mamba_pool.states[int(req.mamba_pool_idx)] += 1  # the request runs on its copy ...
        assert cache.mamba_pool.states[int(source)].tolist() == [1.0, 2.0, 3.0, 4.0]  # ... not the tree's

    def test_a_lock_holds_the_one_node(self):
        cache = self.cache()
        insert(cache, "abcdefgh")
        insert(cache, "abcd")
        leaf = cache.match_prefix("abcdefgh").best_match_node
        cache.inc_lock_ref(leaf)
        locks = {"".join(n.key): n.component_data[CT.MAMBA].lock_ref for n in walk(cache)}
        assert locks == {"abcd": 0, "efgh": 1}
        assert cache.mamba_protected_size() == 1 and cache.mamba_evictable_size() == 1


class TestCascade:
    def test_swa_eviction_inside_takes_the_mamba_state_and_keeps_the_full_kv(self):
        cache = UnifiedRadixCache(components="full,swa,mamba", sliding_window_size=2, mamba_cache_chunk_size=1,
                                  kv_size=64, mamba_size=8)
        insert(cache, "abcdef")
        insert(cache, "abcd")
        assert edges(cache) == [("abcd", "fsm"), ("ef", "fsm")]
        cache.inc_lock_ref(cache.match_prefix("abcdef").best_match_node)  # "ef" and its window held
        got = cache.evict(EvictParams(swa_num_tokens=1))
        assert (got.num_tokens_evicted, got.swa_num_tokens_evicted, got.mamba_num_evicted) == (0, 4, 1)
        assert edges(cache) == [("abcd", "f--"), ("ef", "fsm")]
        check_unified_invariants(cache, held={})

    def test_mamba_eviction_inside_takes_nothing_else(self):
        cache = UnifiedRadixCache(components="full,swa,mamba", sliding_window_size=2, mamba_cache_chunk_size=1,
                                  kv_size=64, mamba_size=8)
        insert(cache, "abcdef")
        insert(cache, "abcd")
        cache.inc_lock_ref(cache.match_prefix("abcdef").best_match_node)
        got = cache.evict(EvictParams(mamba_num=1))
        assert (got.num_tokens_evicted, got.swa_num_tokens_evicted, got.mamba_num_evicted) == (0, 0, 1)
        assert edges(cache) == [("abcd", "fs-"), ("ef", "fsm")]

    def test_full_eviction_deletes_the_leaf_and_every_component_on_it(self):
        cache = UnifiedRadixCache(components="full,swa,mamba", sliding_window_size=2, mamba_cache_chunk_size=1,
                                  kv_size=64, mamba_size=8)
        insert(cache, "abcdef")
        insert(cache, "abcd")
        got = cache.evict(EvictParams(num_tokens=2))
        assert (got.num_tokens_evicted, got.swa_num_tokens_evicted, got.mamba_num_evicted) == (2, 2, 1)
        assert edges(cache) == [("abcd", "fsm")]
        check_unified_invariants(cache, held={})


@pytest.mark.parametrize("page", (2, 4))
def test_pages_keys_are_cut_to_whole_pages(page):
    cache = UnifiedRadixCache(components="full,swa", page_size=page, sliding_window_size=page, kv_size=64)
    insert(cache, "ab" * 4)
    got = cache.match_prefix("ab" * 4 + "x" * (page - 1))
    assert got.device_prefix_len == 8
    assert all(len(n.key) % page == 0 for n in walk(cache))


class TestBadCalls:
    def cache(self):
        cache = UnifiedRadixCache(components="full,swa,mamba", sliding_window_size=2, mamba_cache_chunk_size=1,
                                  kv_size=32, mamba_size=4)
        insert(cache, "abcd")
        return cache

    def picture(self, cache):
        return cache.snapshot().root, cache.snapshot().sizes, cache.token_to_kv_pool_allocator.full_available_size()

    @pytest.mark.parametrize("params, message", [
        (InsertParams(key="xy"), "KV slots"),
        (InsertParams(key="xy", value=torch.tensor([1, 2])), "state"),
        (InsertParams(key="xy", value=torch.tensor([1]), mamba_value=torch.tensor([1])), "only 1 slots"),
        (InsertParams(key="xy", value=torch.tensor([0, 999]), mamba_value=torch.tensor([1])), "outside the pool"),
        (InsertParams(key="xy", value=torch.tensor([1, 2]), mamba_value=torch.tensor([1]), prev_prefix_len=-1),
         "prev_prefix_len"),
    ])
    def test_a_bad_insert_changes_nothing(self, params, message):
        cache = self.cache()
        before = self.picture(cache)
        with pytest.raises(ValueError, match=message):
            cache.insert(params)
        assert self.picture(cache) == before

    def test_a_release_of_a_lock_nobody_took_changes_nothing(self):
        cache = self.cache()
        node = cache.match_prefix("abcd").best_match_node
        receipt = cache.inc_lock_ref(node).to_dec_params()
        cache.dec_lock_ref(node, receipt)
        before = self.picture(cache)
        with pytest.raises(ValueError, match="no"):
            cache.dec_lock_ref(node, receipt)
        with pytest.raises(ValueError, match="not for node"):
            cache.dec_lock_ref(node, DecLockRefParams(node_id=node + 1))
        with pytest.raises(ValueError, match="not in the tree"):
            cache.inc_lock_ref(12345)
        assert self.picture(cache) == before

    @pytest.mark.parametrize("kwargs, message", [
        (dict(components="swa"), "backbone"), (dict(components="full,lru"), "unknown component"),
        (dict(components="full,swa"), "window"), (dict(page_size=0), "page_size"),
        (dict(components="full,mamba", page_size=4, mamba_cache_chunk_size=6), "divide"),
        (dict(eviction_policy="coin"), "eviction policy"), (dict(components="full,full"), "twice"),
    ])
    def test_bad_options_are_refused_in_one_line(self, kwargs, message):
        with pytest.raises(ValueError, match=message):
            UnifiedRadixCache(**kwargs)

    def test_negative_eviction_is_refused(self):
        with pytest.raises(ValueError, match="num_tokens"):
            self.cache().evict(EvictParams(num_tokens=-1))
