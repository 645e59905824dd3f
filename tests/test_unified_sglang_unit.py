"""SGLang's own unit tests of the unified tree (upstream 06ad7b2b0), ported to radixviz's engine.

Each test keeps its upstream name, scenario and assertions, rewritten against the adapter
(tests/sglang_unified_adapter.py, which says what moved between 06ad7b2b0 and v0.5.23), and the
suite runs once per upstream config (19: Full; Full+Mamba; Full+SWA; Full+SWA+Mamba; pages
1 to 128). The tests that do not apply (request-level caching, the host tier, storage, KV
events, mocks of the controller's internal routing) are listed in docs/engines/unified.md.
"""
from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from radixviz.engines.unified.cache_actions import FreeDeviceKV
from radixviz.engines.unified.cache_lru import UnifiedLRUList
from radixviz.engines.unified.cache_params import IncLockRefResult
from radixviz.engines.unified.node import ComponentType as CT
from sglang_unified_adapter import (CONFIGS, CacheConfig, DecLockRefParams, EvictParams, InsertParams,
                                    MatchPrefixParams, RadixKey, build_fixture, make_req, new_node)

configs = pytest.mark.parametrize("cfg", CONFIGS, ids=[c.label for c in CONFIGS])


def seq(cfg: CacheConfig, start: int, num_pages: int) -> list:
    return list(range(start, start + num_pages * cfg.page_size))


def alloc(cfg: CacheConfig, allocator, need: int):
    if not (cfg.has_swa and cfg.page_size > 1):
        return allocator.alloc(need)
    # upstream's helper for a paged SWA pool: whole pages on both sides, paired
    ps = cfg.page_size
    aligned = -(-need // ps) * ps
    full, swa = allocator.full_attn_allocator, allocator.swa_attn_allocator
    if aligned > full.available_size() or aligned > swa.available_size():
        return None
    full = allocator.full_attn_allocator.alloc(aligned)
    allocator.full_to_swa_index_mapping[full] = allocator.swa_attn_allocator.alloc(aligned)
    return full[:need]


def put(cfg, cache, allocator, engine, tokens, priority=0):
    """Insert tokens, with a state when the config has Mamba (upstream's ``_insert``)."""
    value = alloc(cfg, allocator, len(tokens))
    params = InsertParams(key=RadixKey(tokens), value=value[:len(tokens)], priority=priority)
    if cfg.has_mamba:
        params.mamba_value = make_req(engine).mamba_pool_idx.unsqueeze(0)
    return cache.insert(params)


def hit(cache, tokens) -> int:
    return len(cache.match_prefix(MatchPrefixParams(key=RadixKey(tokens))).device_indices)


def node_of(cache, tokens):
    return cache.resolve_node_handle(cache.match_prefix(MatchPrefixParams(key=RadixKey(tokens))).last_device_node)


def swa_lru_order(cache) -> list:
    lru = cache.tree_core.lru_lists[CT.SWA]
    out, cur = [], lru.head.lru_next[lru._pt]
    while cur is not lru.tail:
        out.append(cur)
        cur = cur.lru_next[lru._pt]
    return out


def pinning_supported(cfg) -> bool:
    if not cfg.has_swa or cfg.has_mamba:
        return False
    if 8 * cfg.page_size < cfg.sliding_window_size + cfg.page_size:
        return False
    return cfg.kv_size >= (4 * 8 + 5) * cfg.page_size


def fixture(cfg):
    """(cache, insert): the adapted cache (its engine: ``cache.engine``, its pool:
    ``cache.token_to_kv_pool_allocator``) and upstream's ``_insert`` bound to it."""
    cache, allocator, engine = build_fixture(cfg)
    return cache, lambda tokens, priority=0: put(cfg, cache, allocator, engine, tokens, priority)


@configs
def test_insert_and_match_basic(cfg):
    cache, insert = fixture(cfg)
    a = seq(cfg, 1, 2)
    b = a + seq(cfg, 1000, 1)
    insert(a)
    assert insert(b).prefix_len == len(a)
    assert hit(cache, b) == len(b)
    assert hit(cache, a + seq(cfg, 9000, 1)) == len(a)
    assert hit(cache, seq(cfg, 5000, 2)) == 0
    cache.sanity_check()


@configs
def test_shared_prefix_split(cfg):
    cache, insert = fixture(cfg)
    base = seq(cfg, 1, 2)
    insert(base)
    branch_a, branch_b = base + seq(cfg, 100, 2), base + seq(cfg, 200, 2)
    assert insert(branch_a).prefix_len == len(base)
    assert insert(branch_b).prefix_len == len(base)
    for s in (branch_a, branch_b):
        assert hit(cache, s) == len(s)
    assert hit(cache, base + seq(cfg, 999, 1)) == len(base)
    cache.sanity_check()


@configs
def test_evict_respects_lock_ref(cfg):
    cache, insert = fixture(cfg)
    a, b = seq(cfg, 1, 2), seq(cfg, 500, 2)
    insert(a)
    insert(b)
    m = cache.match_prefix(MatchPrefixParams(key=RadixKey(a)))
    lock = cache.inc_lock_ref(m.last_device_node)
    assert cache.evict(EvictParams(num_tokens=len(a) + len(b))).num_tokens_evicted >= len(b)
    m = cache.match_prefix(MatchPrefixParams(key=RadixKey(a)))
    assert len(m.device_indices) == len(a)
    cache.dec_lock_ref(m.last_device_node, DecLockRefParams(swa_uuid_for_lock=lock.swa_uuid_for_lock))
    assert cache.evict(EvictParams(num_tokens=len(a))).num_tokens_evicted >= len(a)
    cache.sanity_check()


@configs
def test_evict_empty_tree(cfg):
    cache, _ = fixture(cfg)
    params = EvictParams(num_tokens=10, mamba_num=5 if cfg.has_mamba else 0)
    result = cache.evict(params)
    assert result.num_tokens_evicted == 0 and result.mamba_num_evicted == 0
    cache.sanity_check()


@configs
def test_prev_prefix_len(cfg):
    cache, insert = fixture(cfg)
    allocator = cache.token_to_kv_pool_allocator
    engine = cache.engine
    initial = allocator.available_size()
    p1, p2, p3 = seq(cfg, 1, 1), seq(cfg, 1, 2), seq(cfg, 1, 3)
    insert(p1)
    assert allocator.available_size() == initial - len(p1)
    params = InsertParams(key=RadixKey(p2), value=alloc(cfg, allocator, len(p2)), prev_prefix_len=0)
    if cfg.has_mamba:
        params.mamba_value = make_req(engine).mamba_pool_idx.unsqueeze(0)
    assert cache.insert(params).prefix_len == len(p1)  # the overlap's page is freed
    assert allocator.available_size() == initial - len(p1) - (len(p2) - len(p1))
    before = allocator.available_size()
    params = InsertParams(key=RadixKey(p3), value=alloc(cfg, allocator, len(p3)), prev_prefix_len=len(p2))
    if cfg.has_mamba:
        params.mamba_value = make_req(engine).mamba_pool_idx.unsqueeze(0)
    assert cache.insert(params).prefix_len == len(p2)  # nothing freed below prev_prefix_len
    assert allocator.available_size() == before - len(p3)
    cache.sanity_check()


@configs
def test_diagnostics(cfg):
    cache, insert = fixture(cfg)
    insert(seq(cfg, 1, 2))
    diag = cache.available_and_evictable_str()
    assert "Available full tokens" in diag
    assert ("mamba" in diag.lower()) == cfg.has_mamba and ("swa" in diag.lower()) == cfg.has_swa
    assert cache.pretty_print()
    cache.sanity_check()


@configs
def test_paged_match_truncates_unaligned_key(cfg):
    if cfg.page_size == 1:
        pytest.skip("page_size > 1 only")
    cache, insert = fixture(cfg)
    s = seq(cfg, 1, 2)
    insert(s)
    assert hit(cache, s + list(range(9000, 9000 + cfg.page_size - 1))) == len(s)
    assert hit(cache, s[:cfg.page_size - 1]) == 0
    cache.sanity_check()


@configs
def test_paged_page_boundary_mismatch(cfg):
    if cfg.page_size == 1:
        pytest.skip("page_size > 1 only")
    ps = cfg.page_size
    cache, insert = fixture(cfg)
    s = seq(cfg, 1, 2)
    insert(seq(cfg, 1, 1))
    insert(s)
    assert hit(cache, s[:ps] + [9999] * ps) == ps
    assert hit(cache, [9999] + s[1:]) == 0
    cache.sanity_check()


@configs
def test_mamba_evict_only(cfg):
    if not cfg.has_mamba:
        pytest.skip("requires Mamba component")
    cache, insert = fixture(cfg)
    short = seq(cfg, 1, 2)
    insert(short)
    insert(short + seq(cfg, 500, 2))
    assert cache.mamba_evictable_size() == 2
    assert cache.evict(EvictParams(num_tokens=0, mamba_num=1)).mamba_num_evicted >= 1
    assert cache.full_evictable_size() >= 0
    cache.sanity_check()


@configs
def test_mamba_evict_breaks_match(cfg):
    if not cfg.has_mamba:
        pytest.skip("requires Mamba component")
    cache, insert = fixture(cfg)
    short = seq(cfg, 1, 2)
    long = short + seq(cfg, 500, 1)
    insert(short)
    insert(long)
    cache.evict(EvictParams(num_tokens=0, mamba_num=10))
    assert cache.mamba_evictable_size() == 0
    assert hit(cache, long) == 0
    cache.sanity_check()


@configs
def test_mamba_evict_cascades_on_full_leaf(cfg):
    if not cfg.has_mamba:
        pytest.skip("requires Mamba component")
    cache, insert = fixture(cfg)
    s = seq(cfg, 1, 2)
    insert(s)
    result = cache.evict(EvictParams(num_tokens=len(s)))
    assert result.num_tokens_evicted >= len(s) and result.mamba_num_evicted >= 1
    cache.sanity_check()


@configs
def test_mamba_cow_on_match(cfg):
    if not cfg.has_mamba:
        pytest.skip("requires Mamba component")
    cache, insert = fixture(cfg)
    engine = cache.engine
    s = seq(cfg, 1, 2)
    insert(s)
    req2 = make_req(engine)
    m = cache.match_prefix(MatchPrefixParams(key=RadixKey(s), cow_mamba=True, req=req2))
    assert len(m.device_indices) == len(s) and req2.mamba_pool_idx is not None
    src = cache.resolve_node_handle(m.last_device_node).component_data[CT.MAMBA].value
    states = engine.mamba_pool.states
    assert torch.equal(states[int(req2.mamba_pool_idx)], states[int(src)])
    cache.sanity_check()


@configs
def test_swa_insert_keeps_full_leaf_when_entire_span_is_outside_window(cfg):
    if not cfg.has_swa or cfg.has_mamba:
        pytest.skip("requires SWA without Mamba")
    cache, _ = fixture(cfg)
    allocator = cache.token_to_kv_pool_allocator
    engine = cache.engine
    tokens = seq(cfg, 1, 2)
    value = alloc(cfg, allocator, len(tokens))
    full_before = allocator.full_attn_allocator.available_size()
    cache.insert(InsertParams(key=RadixKey(tokens), value=value, prev_prefix_len=0, swa_evicted_seqlen=len(tokens)))
    assert allocator.full_attn_allocator.available_size() == full_before
    node = next(iter(cache.root_node.children.values()))
    assert torch.equal(node.component_data[CT.FULL].value, value)
    assert node.component_data[CT.SWA].value is None
    engine.token_to_kv_pool_allocator.free_swa_segment(value)  # the request's SWA peers it no longer needs
    cache.sanity_check()


def _swa_and_mamba_internal(cfg):
    cache, insert = fixture(cfg)
    engine = cache.engine
    a = seq(cfg, 1, cfg.sliding_window_size // cfg.page_size + 4)
    ab = a + seq(cfg, 7000, 2)
    insert(a)
    insert(ab)
    return cache, engine, a, ab


@configs
def test_leaf_transition_swa_evict_spares_locked_full(cfg):
    if not cfg.has_swa or not cfg.has_mamba:
        pytest.skip("requires SWA and Mamba components")
    cache, _, a, ab = _swa_and_mamba_internal(cfg)
    node_a = node_of(cache, a)
    assert node_a.children
    swa, mamba, full = (node_a.component_data[ct] for ct in (CT.SWA, CT.MAMBA, CT.FULL))
    lock = cache.inc_lock_ref(node_a.id)
    assert mamba.lock_ref >= 1
    cache.dec_swa_lock_only(node_a.id, lock.swa_uuid_for_lock)
    assert swa.lock_ref == 0 and mamba.lock_ref == 0 and full.lock_ref >= 1
    assert cache.tree_core.lru_lists[CT.SWA].in_list(node_a)
    cache.evict(EvictParams(num_tokens=len(ab)))
    assert not node_a.children and full.lock_ref >= 1
    assert cache.tree_core.lru_lists[CT.SWA].in_list(node_a)
    cache.evict(EvictParams(num_tokens=0, swa_num_tokens=len(a)))
    assert full.lock_ref >= 1 and full.value is not None and swa.value is None
    cache.sanity_check()
    cache.dec_lock_ref(node_a.id, DecLockRefParams(swa_uuid_for_lock=None))
    cache.sanity_check()


@configs
def test_swa_early_release_drops_co_located_mamba_lock(cfg):
    if not cfg.has_swa or not cfg.has_mamba:
        pytest.skip("requires SWA and Mamba components")
    cache, insert = fixture(cfg)
    a = seq(cfg, 1, cfg.sliding_window_size // cfg.page_size + 4)
    insert(a)
    node_a = node_of(cache, a)
    assert not node_a.children
    swa, mamba, full = (node_a.component_data[ct] for ct in (CT.SWA, CT.MAMBA, CT.FULL))
    assert mamba.value is not None
    lock = cache.inc_lock_ref(node_a.id)
    assert swa.lock_ref >= 1 and mamba.lock_ref >= 1 and full.lock_ref >= 1
    cache.dec_swa_lock_only(node_a.id, lock.swa_uuid_for_lock)
    assert swa.lock_ref == 0 and mamba.lock_ref == 0 and full.lock_ref >= 1


def _stranded_mamba_lock_trips_the_cascade(cfg, internal: bool):
    cache, insert = fixture(cfg)
    a = seq(cfg, 1, cfg.sliding_window_size // cfg.page_size + 4)
    insert(a)
    if internal:
        insert(a + seq(cfg, 7000, 2))
    node_a = node_of(cache, a)
    assert bool(node_a.children) == internal
    mamba, full = node_a.component_data[CT.MAMBA], node_a.component_data[CT.FULL]
    assert mamba.value is not None
    cache.components[CT.MAMBA].acquire_component_lock(node_a, IncLockRefResult())
    assert mamba.lock_ref >= 1 and full.lock_ref == 0
    tracker = dict.fromkeys(cache.tree_components, 0)
    frees: dict = {}
    cache.tree_core._evict_component_and_detach_lru(node_a, cache.components[CT.SWA], tracker=tracker,
                                                    device_frees=frees, host_frees={})
    cache._drain_device_frees(frees)
    with pytest.raises(AssertionError):
        cache.tree_core._cascade_evict(node_a, cache.components[CT.SWA], tracker, device_frees={}, host_frees={})
    cache.components[CT.MAMBA].release_component_lock(node_a, None)


@configs
def test_cascade_evict_asserts_on_locked_internal_mamba(cfg):
    if not cfg.has_swa or not cfg.has_mamba:
        pytest.skip("requires SWA and Mamba components")
    _stranded_mamba_lock_trips_the_cascade(cfg, internal=True)


@configs
def test_cascade_evict_asserts_on_locked_leaf_mamba(cfg):
    if not cfg.has_swa or not cfg.has_mamba:
        pytest.skip("requires SWA and Mamba components")
    _stranded_mamba_lock_trips_the_cascade(cfg, internal=False)


@configs
@pytest.mark.parametrize("case", ("long_splits", "short_keeps"))
def test_swa_leaf_capped_to_window_on_insert(cfg, case):
    if not cfg.has_swa:
        pytest.skip("requires SWA component")
    ps, window = cfg.page_size, cfg.sliding_window_size
    tail_size = -(-window // ps) * ps
    cache, insert = fixture(cfg)
    s = seq(cfg, 1, tail_size // ps + 2 if case == "long_splits" else tail_size // ps)
    insert(s)
    cache.sanity_check()
    leaf = node_of(cache, s)
    swa_val = leaf.component_data[CT.SWA].value
    assert swa_val is not None
    if case == "long_splits":
        assert len(swa_val) == tail_size and leaf.parent is not cache.root_node
    else:
        assert len(swa_val) == len(s) and leaf.parent is cache.root_node
    lock = cache.inc_lock_ref(leaf.id)
    assert cache.swa_protected_size() == len(swa_val) and cache.full_protected_size() == len(s)
    cache.sanity_check()
    cache.dec_lock_ref(leaf.id, DecLockRefParams(swa_uuid_for_lock=lock.swa_uuid_for_lock))
    cache.sanity_check()


def _chain_with_side(cfg):
    cache, insert = fixture(cfg)
    a = seq(cfg, 1, 8)
    ab = a + seq(cfg, 100, 8)
    abc = ab + seq(cfg, 200, 8)
    for s in (a, ab, abc):
        insert(s)
    side = seq(cfg, 900, 5)
    insert(side)
    return cache, insert, abc, side


@configs
def test_swa_lru_walk_down_does_not_refresh_ancestors_during_insert(cfg):
    if not pinning_supported(cfg):
        pytest.skip("requires SWA-only config with node size >= cushion")
    cache, insert, abc, _ = _chain_with_side(cfg)
    pre = swa_lru_order(cache)
    assert len(pre) == 8
    side_node, b_node, a_node = pre[0], pre[4], pre[6]
    insert(abc + seq(cfg, 300, 8))
    post = swa_lru_order(cache)
    assert len(post) == 10
    assert post.index(side_node) < post.index(b_node) and post.index(side_node) < post.index(a_node)
    cache.sanity_check()


@configs
def test_swa_lru_match_only_refreshes_window_cushion(cfg):
    if not pinning_supported(cfg):
        pytest.skip("requires SWA-only config with node size >= cushion")
    cache, _, abc, _ = _chain_with_side(cfg)
    pre = swa_lru_order(cache)
    assert len(pre) == 8
    side_node, c_node, b_node, a_node = pre[0], pre[2], pre[4], pre[6]
    assert hit(cache, abc) == len(abc)
    post = swa_lru_order(cache)
    assert c_node in post[:2]
    assert post.index(side_node) < post.index(b_node) < post.index(a_node)
    assert post.index(a_node) >= len(post) - 2
    cache.sanity_check()


@configs
def test_swa_lru_old_ancestors_evict_first_under_pressure(cfg):
    if not pinning_supported(cfg):
        pytest.skip("requires SWA-only config with node size >= cushion")
    cache, _, abc, side = _chain_with_side(cfg)
    assert hit(cache, abc) == len(abc)
    assert hit(cache, side) == len(side)
    cache.evict(EvictParams(num_tokens=0, swa_num_tokens=cfg.page_size))
    assert hit(cache, side) == len(side)
    cache.sanity_check()


@configs
def test_swa_lru_fresh_leaf_cap_rebuilds_both_nodes(cfg):
    if not pinning_supported(cfg):
        pytest.skip("requires SWA-only config with node size >= cushion")
    cache, insert = fixture(cfg)
    s = seq(cfg, 1, 8)
    insert(s)
    order = swa_lru_order(cache)
    assert len(order) == 2
    tail, prefix = order
    tail_swa, prefix_swa = tail.component_data[CT.SWA].value, prefix.component_data[CT.SWA].value
    assert tail_swa is not None and prefix_swa is not None
    assert not tail.children and prefix is tail.parent
    assert len(tail.key) < cfg.sliding_window_size + cfg.page_size
    assert len(tail.key) + len(prefix.key) == len(s) == len(tail_swa) + len(prefix_swa)
    assert cache.tree_core.component_evictable_size_[CT.SWA] == len(s)
    cache.sanity_check()


@configs
def test_swa_sanity_check_passes_after_deep_match(cfg):
    if not pinning_supported(cfg):
        pytest.skip("requires SWA-only config with node size >= cushion")
    cache, _, abc, _ = _chain_with_side(cfg)
    for _ in range(3):
        assert hit(cache, abc) == len(abc)
        cache.sanity_check()


@configs
def test_tombstone_cleanup_respects_locked_parent(cfg):
    cache, _ = fixture(cfg)
    engine = cache.engine
    parent, deleted = new_node(1000), new_node(1001)
    parent.key, deleted.key = RadixKey(seq(cfg, 1, 1)), RadixKey(seq(cfg, 1000, 1))
    parent.parent, deleted.parent = cache.root_node, parent
    parent.component_data[CT.FULL].value = torch.arange(cfg.page_size, dtype=torch.int64)
    parent.component_data[CT.FULL].lock_ref = 1
    parent_key = engine.child_key(parent.key)
    cache.root_node.children[parent_key] = parent
    tracker = dict.fromkeys(cache.tree_components, 0)
    frees: dict = {}
    cache.tree_core._iteratively_delete_tombstone_leaf(deleted, tracker, frees, {})
    cache._drain_device_frees(frees)
    assert cache.root_node.children[parent_key] is parent
    assert all(n == 0 for n in tracker.values())


@configs
def test_aux_evict_full_locked_leaf_tombstones_aux_only(cfg):
    aux_types = [ct for ct in (CT.SWA, CT.MAMBA) if ct in cfg.components]
    if len(aux_types) != 1:
        pytest.skip("requires exactly one auxiliary component")
    aux = aux_types[0]
    cache, insert = fixture(cfg)
    s = seq(cfg, 1, 1)
    insert(s)
    node = node_of(cache, s)
    full_cd, aux_cd = node.component_data[CT.FULL], node.component_data[aux]
    assert not node.children and full_cd.value is not None and aux_cd.value is not None
    lock = cache.inc_lock_ref(node.id)
    assert full_cd.lock_ref > 0 and aux_cd.lock_ref > 0
    aux_len = len(aux_cd.value)
    cache.tree_core.component_protected_size_[aux] -= aux_len
    cache.tree_core.component_evictable_size_[aux] += aux_len
    aux_cd.lock_ref = 0
    assert node not in cache.tree_core.evictable_device_leaves
    params = EvictParams(num_tokens=0, swa_num_tokens=aux_len if aux == CT.SWA else 0,
                         mamba_num=aux_len if aux == CT.MAMBA else 0)
    result = cache.evict(params)
    assert result.num_tokens_evicted == 0
    assert (result.swa_num_tokens_evicted if aux == CT.SWA else result.mamba_num_evicted) == aux_len
    assert full_cd.value is not None and aux_cd.value is None
    assert not cache.tree_core.lru_lists[aux].in_list(node)
    aux_cd.lock_ref = 1  # v0.5.23's release asserts it finds the lock it took (upstream zeroed it)
    cache.dec_lock_ref(node.id, DecLockRefParams(swa_uuid_for_lock=lock.swa_uuid_for_lock))
    cache.sanity_check()


@configs
def test_evict_leaf_frees_all_components(cfg):
    cache, insert = fixture(cfg)
    insert(seq(cfg, 1, 3))
    full_before = cache.full_evictable_size()
    assert full_before > 0
    assert cache.evict(EvictParams(num_tokens=full_before * 2)).num_tokens_evicted >= full_before
    assert cache.full_evictable_size() == cache.mamba_evictable_size() == cache.swa_evictable_size() == 0
    cache.sanity_check()


@configs
def test_evict_cascade_parent_becomes_d_leaf(cfg):
    cache, insert = fixture(cfg)
    base = seq(cfg, 1, 2)
    insert(base)
    insert(base + seq(cfg, 500, 2))
    m = cache.match_prefix(MatchPrefixParams(key=RadixKey(base)))
    lock = cache.inc_lock_ref(m.last_device_node)
    cache.evict(EvictParams(num_tokens=len(base) + 2 * cfg.page_size))
    cache.sanity_check()
    cache.dec_lock_ref(m.last_device_node, DecLockRefParams(swa_uuid_for_lock=lock.swa_uuid_for_lock))
    assert cache.resolve_node_handle(m.last_device_node) in cache.tree_core.evictable_device_leaves
    cache.sanity_check()


@configs
def test_evict_iterative_tombstone_cleanup(cfg):
    cache, insert = fixture(cfg)
    ps = cfg.page_size
    chain = seq(cfg, 1, 6)
    for n in (2 * ps, 4 * ps, 6 * ps):
        insert(chain[:n])
    initial = cache.full_evictable_size()
    assert cache.evict(EvictParams(num_tokens=initial * 2)).num_tokens_evicted >= initial
    assert cache.full_evictable_size() == 0 and not cache.root_node.children
    cache.sanity_check()


@configs
def test_evict_respects_lru_order(cfg):
    cache, insert = fixture(cfg)
    old, new = seq(cfg, 1, 2), seq(cfg, 500, 2)
    insert(old)
    insert(new)
    hit(cache, new)
    cache.evict(EvictParams(num_tokens=len(old)))
    assert hit(cache, old) == 0 and hit(cache, new) == len(new)
    cache.sanity_check()


@configs
def test_evict_respects_priority_policy(cfg):
    if cfg.components != (CT.FULL,):
        pytest.skip("priority policy ordering is covered on Full-only configs")
    pcfg = replace(cfg, eviction_policy="priority")
    cache, allocator, engine = build_fixture(pcfg)
    high, low = seq(cfg, 1, 2), seq(cfg, 500, 2)
    put(pcfg, cache, allocator, engine, high, priority=10)
    put(pcfg, cache, allocator, engine, low, priority=0)
    cache.evict(EvictParams(num_tokens=len(low)))
    assert hit(cache, high) == len(high) and hit(cache, low) == 0
    cache.sanity_check()


@configs
def test_evict_multiple_independent_leaves(cfg):
    cache, insert = fixture(cfg)
    seqs = [seq(cfg, i * 100, 2) for i in range(4)]
    for s in seqs:
        insert(s)
    total = sum(map(len, seqs))
    assert cache.full_evictable_size() == total
    half = total // 2
    assert cache.evict(EvictParams(num_tokens=half)).num_tokens_evicted >= half
    assert cache.full_evictable_size() <= total - half
    cache.sanity_check()
    remaining = cache.full_evictable_size()
    assert cache.evict(EvictParams(num_tokens=remaining * 2)).num_tokens_evicted >= remaining
    assert cache.full_evictable_size() == 0
    cache.sanity_check()


@configs
def test_evict_shared_prefix_keeps_common_path(cfg):
    cache, insert = fixture(cfg)
    base = seq(cfg, 1, 2)
    a, b = base + seq(cfg, 100, 2), base + seq(cfg, 200, 2)
    insert(a)
    insert(b)
    m = cache.match_prefix(MatchPrefixParams(key=RadixKey(b)))
    lock = cache.inc_lock_ref(m.last_device_node)
    cache.evict(EvictParams(num_tokens=len(a)))
    assert hit(cache, b) == len(b)
    cache.dec_lock_ref(m.last_device_node, DecLockRefParams(swa_uuid_for_lock=lock.swa_uuid_for_lock))
    cache.sanity_check()


@configs
def test_evict_result_accounting_matches_actual(cfg):
    cache, insert = fixture(cfg)
    for i in range(5):
        insert(seq(cfg, i * 100, 2))
    before = cache.full_evictable_size()
    result = cache.evict(EvictParams(num_tokens=before))
    assert result.num_tokens_evicted == before - cache.full_evictable_size()
    cache.sanity_check()


@configs
def test_evict_reinsert_after_full_eviction(cfg):
    cache, insert = fixture(cfg)
    a = seq(cfg, 1, 2)
    insert(a)
    cache.evict(EvictParams(num_tokens=len(a) * 2))
    assert cache.full_evictable_size() == 0
    b = seq(cfg, 500, 2)
    insert(b)
    assert hit(cache, b) == len(b)
    cache.sanity_check()


@configs
def test_swa_evict_internal_tombstone(cfg):
    if not cfg.has_swa:
        pytest.skip("requires SWA component")
    cache, insert = fixture(cfg)
    base = seq(cfg, 1, 3)
    insert(base)
    insert(base + seq(cfg, 500, 3))
    cache.evict(EvictParams(num_tokens=0, swa_num_tokens=cache.swa_evictable_size() * 2))
    assert cache.swa_evictable_size() == 0
    cache.sanity_check()


@configs
def test_evict_d_leaf_set_consistency(cfg):
    cache, insert = fixture(cfg)
    seqs = [seq(cfg, i * 100, 2) for i in range(6)]
    for s in seqs:
        insert(s)
    m = cache.match_prefix(MatchPrefixParams(key=RadixKey(seqs[0])))
    lock = cache.inc_lock_ref(m.last_device_node)
    cache.evict(EvictParams(num_tokens=len(seqs[1])))
    cache.sanity_check()
    cache.dec_lock_ref(m.last_device_node, DecLockRefParams(swa_uuid_for_lock=lock.swa_uuid_for_lock))
    cache.sanity_check()
    insert(seq(cfg, 9000, 2))
    cache.sanity_check()


def _long_enough(cfg) -> list:
    ps = cfg.page_size
    need = 2 * ps if not cfg.has_swa else max(2 * ps, cfg.sliding_window_size + ps)
    return seq(cfg, 1, -(-need // ps))


@configs
def test_match_prefix_best_and_device_node_without_hicache(cfg):
    cache, insert = fixture(cfg)
    s = _long_enough(cfg)
    insert(s)
    result = cache.match_prefix(MatchPrefixParams(key=RadixKey(s)))
    assert len(result.device_indices) == len(s)
    assert result.best_match_node == result.last_device_node == result.last_host_node
    assert result.host_hit_length == 0


@configs
def test_full_kv_hit_length_counts_the_split_fragment(cfg):
    if cfg.page_size != 1:
        pytest.skip("page_size=1 keeps the split boundary mid-node")
    cache, insert = fixture(cfg)
    insert(list(range(1, 9)))
    assert cache.match_prefix(MatchPrefixParams(key=RadixKey([1, 2, 3, 4, 99]))).full_kv_hit_length == 4


@configs
def test_zero_match_result_carries_node_id_handles(cfg):
    # zero_match_result (base_prefix_cache.py) answers with the root's id; a lock on it must work
    cache, insert = fixture(cfg)
    s = _long_enough(cfg)
    insert(s)
    cache.match_prefix(MatchPrefixParams(key=RadixKey(s)))
    root = cache.root_node.id
    lock = cache.inc_lock_ref(root)
    cache.dec_lock_ref(root, lock.to_dec_params())
    cache.sanity_check()


# ---- the classes outside the suite


def _chain(key_lens):
    root = new_node(0)
    root.key = ()
    nodes, parent = [], root
    for i, n in enumerate(key_lens, start=1):
        node = new_node(i)
        node.key, node.parent = tuple(range(n)), parent
        nodes.append(node)
        parent = node
    return root, nodes


def _order(lru) -> list:
    return [lru.cache[i] for i in lru.order()]


def test_bounded_refresh_skips_non_included():
    root, (a, _, c, d) = _chain([2, 2, 2, 2])
    lru = UnifiedLRUList(CT.SWA)
    for n in (a, c, d):
        lru.insert_mru(n)
    assert _order(lru) == [d, c, a]
    lru.reset_node_and_window_ancestors_mru(d, root, 5, lambda n: n in {a, c, d})
    assert _order(lru) == [d, c, a]


def test_bounded_refresh_visits_only_until_window_filled():
    root, (a, b, c, d) = _chain([3, 3, 3, 3])
    lru = UnifiedLRUList(CT.SWA)
    for n in (d, c, b, a):
        lru.insert_mru(n)
    assert _order(lru) == [a, b, c, d]
    lru.reset_node_and_window_ancestors_mru(d, root, 5, lambda n: True)
    assert _order(lru) == [d, c, a, b]


def test_bounded_refresh_stops_at_root():
    root, (a, b) = _chain([1, 1])
    lru = UnifiedLRUList(CT.SWA)
    for n in (a, b):
        lru.insert_mru(n)
    lru.reset_node_and_window_ancestors_mru(b, root, 1000, lambda n: True)
    assert _order(lru) == [b, a]


def test_bounded_refresh_window_zero_is_noop():
    root, (a, b, c) = _chain([2, 2, 2])
    lru = UnifiedLRUList(CT.SWA)
    for n in (a, b, c):
        lru.insert_mru(n)
    before = _order(lru)
    lru.reset_node_and_window_ancestors_mru(c, root, 0, lambda n: True)
    assert _order(lru) == before


def test_match_refreshes_only_used_node():
    cfg = CacheConfig(page_size=1, components=(CT.FULL, CT.MAMBA))
    cache, insert = fixture(cfg)
    for tokens in ([1, 2, 3], [1, 2, 3, 4, 5, 6], [7, 8, 9], [7, 8, 9, 10, 11, 12]):
        insert(tokens)

    def leaf(tokens):
        return cache.tree_core.node_by_id(cache.match_prefix(MatchPrefixParams(key=RadixKey(tokens))).best_match_node)

    lru = cache.tree_core.lru_lists[CT.MAMBA]
    b1 = leaf([1, 2, 3, 4, 5, 6])
    a1 = b1.parent
    b2 = leaf([7, 8, 9, 10, 11, 12])
    a2 = b2.parent
    order = _order(lru)
    assert order.index(a1) > order.index(a2)
    assert leaf([1, 2, 3, 4, 5, 6]) is b1
    order = _order(lru)
    assert order[0] is b1 and order.index(a1) > order.index(a2)


GRID_CFG = CacheConfig(page_size=64, components=(CT.FULL, CT.MAMBA), enable_mamba_extra_buffer=True, kv_size=1024)


def test_grid_follows_the_widened_tree_page():
    cache, _, _ = build_fixture(GRID_CFG, tree_page_size=256, mamba_cache_chunk_size=64)
    assert cache.components[CT.MAMBA].mamba_checkpoint_grid == 256


def test_grid_is_the_chunk_size_without_widening():
    cache, _, _ = build_fixture(GRID_CFG, mamba_cache_chunk_size=64)
    assert cache.components[CT.MAMBA].mamba_checkpoint_grid == 64


def test_insert_abort_drains_pending_deferred_frees(monkeypatch):
    cfg = CacheConfig()
    cache, insert = fixture(cfg)
    allocator = cache.token_to_kv_pool_allocator
    insert([1, 2, 3, 4])
    available = allocator.available_size()

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(cache.components[CT.FULL], "commit_insert_component_data", boom)
    with pytest.raises(RuntimeError):
        insert(list(range(1, 9)))
    assert allocator.available_size() == available - 4  # 8 taken, the 4 duplicates given back
    assert cache.tree_core._ongoing_insert_walk_state is None


def test_deferrable_actions_ride_final_step_without_suspension():
    cfg = CacheConfig()
    cache, insert = fixture(cfg)
    allocator = cache.token_to_kv_pool_allocator
    insert([1, 2, 3, 4])
    step = cache.tree_core.begin_insert(InsertParams(key=RadixKey(range(1, 9)), value=allocator.alloc(8)).for_engine())
    assert step.result is not None
    assert any(isinstance(a, FreeDeviceKV) for a in step.actions)
    cache._apply_cache_actions(step.actions)
    cache.tree_core.end_insert()
    cache.sanity_check()


SWA8 = CacheConfig(components=(CT.FULL, CT.SWA), sliding_window_size=8)


def test_swa_recovery_keeps_recovered_node_below_window_nodes():
    sw = SWA8.sliding_window_size
    cache, _ = fixture(SWA8)
    allocator = cache.token_to_kv_pool_allocator
    key = RadixKey(range(1, 2 * sw + 1))
    first = allocator.alloc(len(key))
    allocator.free_swa_segment(first[:sw])  # the request's own SWA KV before the window is gone
    cache.insert(InsertParams(key=key, value=first, swa_evicted_seqlen=sw))
    prefix_node = next(iter(cache.root_node.children.values()))
    window_node = next(iter(prefix_node.children.values()))
    assert prefix_node.component_data[CT.SWA].value is None
    cache.insert(InsertParams(key=key, value=allocator.alloc(len(key)), swa_evicted_seqlen=0))
    assert prefix_node.component_data[CT.SWA].value is not None
    cache.evict(EvictParams(num_tokens=0, swa_num_tokens=sw))
    assert prefix_node.component_data[CT.SWA].value is None
    assert window_node.component_data[CT.SWA].value is not None
    assert window_node.component_data[CT.FULL].value is not None
    cache.sanity_check()


def test_dec_swa_lock_only_early_release_keeps_full_lock():
    cache, insert = fixture(SWA8)
    s = seq(SWA8, 1, SWA8.sliding_window_size + 4)
    insert(s)
    node = node_of(cache, s)
    swa, full = node.component_data[CT.SWA], node.component_data[CT.FULL]
    lock = cache.inc_lock_ref(node.id)
    assert swa.lock_ref >= 1
    cache.dec_swa_lock_only(node.id, lock.swa_uuid_for_lock)
    assert swa.lock_ref == 0 and full.lock_ref >= 1
    cache.dec_lock_ref(node.id, DecLockRefParams(swa_uuid_for_lock=None))
    cache.sanity_check()
