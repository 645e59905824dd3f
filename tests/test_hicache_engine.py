"""The host-tier engine's behaviours, one at a time, on a real device pool and host pool.

SGLang's own unit tests of the node's tier flags (``test_evicted_backuped_properties``) and
host references (``test_protect_release_host``, test/registered/unit/mem_cache/
test_radix_cache_unit.py at 9fbe6800a) hold on our node; then each rule of the file: the
three write policies and their thresholds, a write that locks its node until it is
acknowledged, eviction that keeps the host copy, host eviction, matching split by tier,
load back with its threshold and its room, and the KV itself surviving the round trip.
"""
from __future__ import annotations

import pytest
import torch

from oracles.naive_hicache import NaiveHiRadixCache
from radixviz.cache import InvariantError, TokenToKVPool
from radixviz.cache.engines import engine_spec, open_engine
from radixviz.engines.hicache.engine import TreeNode, check_hicache_invariants, default_host_size


def engine(write_policy="write_through", size=32, page=1, host=None, eviction="lru"):
    pool = TokenToKVPool(size, device="cpu")
    return open_engine("hicache", pool, write_policy=write_policy, page_size=page,
                       host_size=host, eviction_policy=eviction)


def put(e, text, priority=0):
    """Insert ``text`` on fresh slots, as a finished request would."""
    slots = e.pool.alloc(len(text))
    assert slots is not None, "the test's pool is too small"
    return e.insert(text, slots, priority)


def node_of(e, text):
    return e.match_tiers(text).last_device_node


class TestSGLangNodeTests:
    @pytest.mark.parametrize("has_value, has_host_value, evicted, backuped", [
        (False, False, True, False), (True, False, False, False),
        (True, True, False, True), (False, True, True, True)])
    def test_evicted_backuped_properties(self, has_value, has_host_value, evicted, backuped):
        node = TreeNode(0, 1, 2)
        if has_value:
            node.value = torch.tensor([1, 2, 3])
        if has_host_value:
            node.host_value = torch.tensor([4, 5, 6])
        assert (node.evicted, node.backuped) == (evicted, backuped)

    def test_protect_release_host(self):
        node = TreeNode(0, 1, 2)
        assert node.host_ref_counter == 0
        node.protect_host()
        assert node.host_ref_counter == 1
        node.release_host()
        assert node.host_ref_counter == 0
        with pytest.raises(RuntimeError):
            node.release_host()


class TestWritePolicies:
    def test_write_through_writes_at_insert_and_locks_until_acknowledged(self):
        e = engine()
        put(e, "Hello_world!")
        node = node_of(e, "Hello_world!")
        assert node.backuped and not node.evicted
        assert node.lock_ref == 1 and e.in_flight() == 1          # the write holds its node
        assert e.evictable_size() == 0 and e.protected_size() == 12
        assert e.evict(100) == 0                                  # eviction passes it over
        assert e.sync() == 1
        assert node.lock_ref == 0 and e.in_flight() == 0 and e.evictable_size() == 12
        e.check_invariants()

    def test_selective_writes_at_the_second_hit(self):
        e = engine("write_through_selective")
        put(e, "Hello_world!")
        node = node_of(e, "Hello_world!")
        assert node.hit_count == 1 and not node.backuped and e.in_flight() == 0
        put(e, "Hello_world!")                                    # the second insert through it
        assert node.hit_count == 2 and node.backuped and e.in_flight() == 1
        e.check_invariants()

    def test_selective_eviction_deletes_a_node_hit_once(self):
        e = engine("write_through_selective")
        put(e, "Hello_world!")
        assert e.evict(12) == 12
        assert e.match_tiers("Hello_world!").host_hit_length == 0
        assert e.cache.moved.dropped == 12 and not e.root_node.children

    def test_write_back_writes_only_when_evicting(self):
        e = engine("write_back")
        put(e, "Hello_world!")
        put(e, "Hello_world!")
        node = node_of(e, "Hello_world!")
        assert not node.backuped and node.hit_count == 0 and e.in_flight() == 0
        assert e.evict(12) == 12
        assert node.evicted and node.backuped and e.in_flight() == 0   # acknowledged in the call
        assert e.cache.moved.written == 12 and e.cache.moved.demoted == 12
        e.check_invariants()

    def test_the_write_policy_changes_only_with_nothing_in_flight(self):
        e = engine()
        put(e, "Hello_world!")
        with pytest.raises(ValueError, match="sync"):
            e.change("write_policy", "write_back")
        e.sync()
        e.change("write_policy", "write_back")
        assert e.cache.write_policy == "write_back" and e.settings["write_policy"] == "write_back"


class TestEviction:
    def test_a_backed_up_node_keeps_its_host_copy(self):
        e = engine()
        put(e, "Hello_world!")
        e.sync()
        node = node_of(e, "Hello_world!")
        host = node.host_value.tolist()
        assert e.evict(5) == 12 and e.pool.available_size() == 32
        assert node.evicted and node.backuped and node.host_value.tolist() == host
        assert node in e.cache.evictable_host_leaves and node.parent is e.root_node
        e.check_invariants()

    def test_host_eviction_takes_host_only_leaves_not_protected_ones(self):
        e = engine()
        for text in ("aaaaaaaaaaaa", "bbbbbbbbbbbb"):
            put(e, text)
        e.sync()
        e.evict(24)
        a = e.match_tiers("aaaaaaaaaaaa").last_host_node
        a.protect_host()
        freed = e.evict_host(1)
        assert freed == 12 and "a" in [n.key[0] for n in e.root_node.children.values()]
        assert e.host_pool.available_size() == e.host_pool.size - 12
        a.release_host()
        assert e.evict_host(1) == 12 and not e.root_node.children
        e.check_invariants()

    def test_host_eviction_never_takes_a_node_on_the_device(self):
        e = engine()
        put(e, "aaaaaaaaaaaa")
        e.sync()
        assert e.evict_host(100) == 0 and e.host_pool.used_size() == 12


class TestMatchAndLoadBack:
    def test_match_splits_device_prefix_and_host_hit(self):
        e = engine()
        put(e, "Hello_")
        put(e, "Hello_world!")
        e.sync()
        e.evict(6)                                   # 'world!' goes to the host only
        result = e.match_tiers("Hello_world!?")
        assert len(result.device_indices) == 6 and result.host_hit_length == 6
        assert result.last_device_node.key == tuple("Hello_")
        assert result.last_host_node.key == tuple("world!") and result.last_host_node.evicted

    def test_load_back_below_the_threshold_is_refused(self):
        e = engine()
        put(e, "abcdefghi")                          # 9 tokens: one short of the threshold
        e.sync()
        e.evict(9)
        node = e.match_tiers("abcdefghi").last_host_node
        slots, last = e.load_back(node)
        assert len(slots) == 0 and last is e.root_node and node.evicted

    def test_load_back_locks_the_path_until_acknowledged(self):
        e = engine()
        put(e, "Hello_world!")
        e.sync()
        e.evict(12)
        node = e.match_tiers("Hello_world!").last_host_node
        slots, last = e.load_back(node)
        assert last is node and len(slots) == 12 and not node.evicted
        assert node.lock_ref == 1 and e.in_flight() == 1
        assert e.start_loads() == 12
        e.check_invariants()
        e.check_events()
        assert node.lock_ref == 0 and e.in_flight() == 0
        assert e.match_tiers("Hello_world!").device_indices.tolist() == slots.tolist()

    def test_load_back_evicts_to_make_room(self):
        e = engine(size=24)
        put(e, "aaaaaaaaaaaa")
        e.sync()
        e.evict(12)                                  # a on the host only
        put(e, "bbbbbbbbbbbb")
        put(e, "cccccccccccc")                       # the device is full
        e.sync()
        node = e.match_tiers("aaaaaaaaaaaa").last_host_node
        slots, _last = e.load_back(node)
        assert len(slots) == 12 and e.cache.moved.demoted == 24   # b went to the host to make room
        assert e.match_tiers("bbbbbbbbbbbb").host_hit_length == 12
        e.check_invariants()

    def test_the_kv_survives_the_round_trip(self):
        e = engine()
        slots = e.pool.alloc(12)
        for layer in range(e.pool.layer_num):
            e.pool.k_buffer[layer][slots] = torch.randn(12, e.pool.head_num, e.pool.head_dim)
            e.pool.v_buffer[layer][slots] = torch.randn(12, e.pool.head_num, e.pool.head_dim)
        original = [(e.pool.k_buffer[i][slots].clone(), e.pool.v_buffer[i][slots].clone())
                    for i in range(e.pool.layer_num)]
        e.insert("Hello_world!", slots)
        e.sync()
        e.evict(12)
        filler = e.pool.alloc(12)                    # the old slots are reused and overwritten
        for layer in range(e.pool.layer_num):
            e.pool.k_buffer[layer][filler] = 0.0
        node = e.match_tiers("Hello_world!").last_host_node
        loaded, _ = e.load_back(node)
        e.start_loads()
        assert set(loaded.tolist()).isdisjoint(slots.tolist())
        for layer, (k, v) in enumerate(original):
            assert torch.equal(e.pool.k_buffer[layer][loaded], k)
            assert torch.equal(e.pool.v_buffer[layer][loaded], v)


class TestInsertOnTheHost:
    def test_an_insert_through_a_host_only_node_gives_it_device_slots(self):
        e = engine()
        put(e, "Hello_world!")
        e.sync()
        e.evict(12)
        done = put(e, "Hello_world!more")
        node = e.match_tiers("Hello_world!").last_device_node
        assert done.prefix_len == 0 and not node.evicted and node.backuped
        assert len(done.new_slots) == 16 and len(done.duplicates) == 0
        e.sync()
        e.check_invariants()


class TestHostLeafRule:
    """Under write_back, a backed-up parent can be demoted while its child's write-back is
    still pending. 9fbe6800a then files the parent as a host leaf (it asks whether the child
    is evicted, and the child is not yet); radixviz asks whether the child has a host copy."""

    def scenario(self, cache_insert, cache_evict, match, load):
        cache_insert("abcdefghijkl")
        cache_evict(12)                    # written back: host only
        load(match("abcdefghijkl"))        # back on the device, host copy kept
        cache_insert("abcdefghijklmnop")   # a new child, on the device only

    def test_head_rule_leaves_the_parent_a_host_candidate_above_its_child(self):
        ref = NaiveHiRadixCache(32, 65, write_policy="write_back", head_host_leaf_rule=True)

        def insert(text):
            slots = ref.device.alloc(len(text))
            prefix = ref.insert(text, slots.clone())
            ref.device.free(slots[:prefix])

        def load(found):
            ref.init_load_back(found[2])
            ref.ready_to_load_host_cache()
            ref.check_hicache_events()
        self.scenario(insert, lambda n: ref.evict(n), ref.match_prefix, load)
        ref.evict(100)
        parent = ref.root_node.children["a"]
        child = next(iter(parent.children.values()))
        assert parent.evicted and child.backuped and parent in ref.evictable_host_leaves

    def test_radixviz_keeps_the_parent_until_its_child_is_gone(self):
        e = engine("write_back")

        def load(found):
            e.load_back(found.last_host_node)
            e.start_loads()
            e.sync()
        self.scenario(lambda text: put(e, text), e.evict, e.match_tiers, load)
        e.evict(100)
        parent = e.root_node.children["a"]
        assert parent.evicted and parent not in e.cache.evictable_host_leaves
        e.check_invariants()
        e.evict_host(1)                    # takes the child, the leaf
        assert "a" in e.root_node.children and not parent.children
        e.check_invariants()


class TestSettings:
    def test_default_host_size_is_sglangs_ratio_aligned_up(self):
        assert default_host_size(32) == 65
        assert default_host_size(64, page_size=4) == 132
        assert engine(size=32).host_pool.size == 65

    def test_the_host_must_be_larger_than_the_device(self):
        with pytest.raises(ValueError, match="larger than the device"):
            engine(size=32, host=32)
        with pytest.raises(ValueError, match="whole pages"):
            engine(size=32, page=4, host=42)

    def test_the_registry_names_the_host_tier(self):
        spec = engine_spec("hicache")
        assert spec.host_tier and spec.pages and spec.eviction_policies
        assert spec.badge({**spec.defaults, "host_size": 80}) == \
            "hicache · page 1 · lru · write_through · host 80"

    def test_invariants_catch_a_host_slot_freed_under_a_node(self):
        e = engine()
        put(e, "Hello_world!")
        e.sync()
        node = node_of(e, "Hello_world!")
        e.host_pool.free(node.host_value[:1])
        with pytest.raises(InvariantError, match="host slot"):
            check_hicache_invariants(e.cache, e.pool)


class TestNamespacesAndKVEvents:
    """What the host tier inherits from today's cache (namespaces, page hashes, KV events) and
    where SGLang's hierarchical cache reports a block: stored at insert, removed only when its
    KV leaves both tiers (a demotion keeps it reachable, so it reports nothing)."""

    def events_engine(self, write_policy="write_through"):
        pool = TokenToKVPool(32, device="cpu")
        e = open_engine("hicache", pool, page_size=4, write_policy=write_policy, kv_events=True)
        assert [ev.kind for ev in e.take_events()] == ["cleared"]   # the fresh tree says so
        return e

    def test_a_demotion_reports_nothing_a_host_eviction_removes_what_was_stored(self):
        e = self.events_engine()
        put(e, "abcdefgh")
        stored = e.take_events()
        assert [ev.kind for ev in stored] == ["stored", "stored"]
        e.sync()
        e.evict(8)
        assert e.take_events() == []                      # still on the host: still reachable
        e.evict_host(8)
        removed = e.take_events()
        assert [ev.kind for ev in removed] == ["removed", "removed"]
        assert [ev.block_hashes for ev in removed] == [ev.block_hashes for ev in stored]
        e.check_invariants()

    def test_an_eviction_without_a_host_copy_removes_at_once(self):
        e = self.events_engine("write_through_selective")
        put(e, "abcd")
        e.take_events()
        e.evict(4)
        assert [ev.kind for ev in e.take_events()] == ["removed"]

    def test_namespaces_never_share_a_node_on_either_tier(self):
        e = engine()
        for space in ("lora-a", "lora-b"):
            slots = e.pool.alloc(12)
            assert e.insert("Hello_world!", slots, extra_key=space).prefix_len == 0
        e.sync()
        e.evict(24)
        a = e.match_tiers("Hello_world!", extra_key="lora-a")
        assert a.host_hit_length == 12 and a.last_host_node.extra_key == "lora-a"
        assert e.match_tiers("Hello_world!").host_hit_length == 0   # no namespace: no hit
        slots, node = e.load_back(a.last_host_node)
        assert len(slots) == 12 and node.extra_key == "lora-a"
        e.sync()
        e.check_invariants()
