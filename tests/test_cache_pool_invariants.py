"""The KV pools, check_invariants against deliberately broken copies, and import hygiene."""
from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import torch

from radixviz.cache import (InvariantError, PoolError, RadixCache, ReqToTokenPool, TokenToKVPool,
                            check_invariants, compare_matchers, resolve_device)


class TestTokenToKVPool:
    def test_alloc_takes_the_lowest_free_slots(self):
        pool = TokenToKVPool(8, device="cpu")
        assert pool.alloc(3).tolist() == [0, 1, 2]
        pool.free(torch.tensor([1]))
        got = pool.alloc(2)
        assert got.tolist() == [1, 3] and got.dtype == torch.int64
        assert pool.used_size() == 4 and pool.available_size() == 4

    def test_alloc_when_short_returns_none_and_changes_nothing(self):
        pool = TokenToKVPool(4, device="cpu")
        pool.alloc(3)
        before = pool.refcounts()
        assert pool.alloc(2) is None
        assert pool.refcounts() == before
        assert pool.alloc(0).tolist() == []

    @pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
    def test_alloc_refuses_a_bad_size(self, bad):
        pool = TokenToKVPool(4, device="cpu")
        with pytest.raises(PoolError):
            pool.alloc(bad)
        assert pool.available_size() == 4

    def test_free_returns_how_many_slots_became_free(self):
        pool = TokenToKVPool(8, device="cpu")
        new = pool.alloc(3)
        pool.add_refs(new[:2])
        assert pool.refcounts()[:3] == (2, 2, 1)
        assert pool.free(new) == 1
        assert pool.free([0, 1]) == 2
        assert pool.available_size() == 8
        assert pool.free(torch.empty(0, dtype=torch.int64)) == 0

    def test_free_counts_a_repeated_slot_once(self):
        pool = TokenToKVPool(4, device="cpu")
        pool.alloc(1)
        pool.add_refs([0])
        assert pool.free([0, 0]) == 1 and pool.available_size() == 4

    @pytest.mark.parametrize("slots", [[0, 0], [2], [9], [-1], [0.5]])
    def test_bad_free_is_refused_and_changes_nothing(self, slots):
        pool = TokenToKVPool(4, device="cpu")
        pool.alloc(2)
        before = pool.refcounts()
        with pytest.raises(PoolError):
            pool.free(torch.tensor(slots))
        assert pool.refcounts() == before

    def test_double_free_is_refused(self):
        pool = TokenToKVPool(4, device="cpu")
        new = pool.alloc(2)
        pool.free(new)
        with pytest.raises(PoolError, match="free"):
            pool.free(new)
        assert pool.available_size() == 4

    def test_add_refs_needs_slots_in_use(self):
        pool = TokenToKVPool(4, device="cpu")
        pool.alloc(1)
        with pytest.raises(PoolError):
            pool.add_refs([0, 1])
        assert pool.refcounts() == (1, 0, 0, 0)
        pool.add_refs([0, 0])
        assert pool.refcounts() == (3, 0, 0, 0)

    def test_buffers_hold_every_slot_of_every_layer(self):
        pool = TokenToKVPool(6, head_num=3, head_dim=4, layer_num=2, dtype=torch.float16, device="cpu")
        assert len(pool.k_buffer) == len(pool.v_buffer) == 2
        assert pool.get_key_buffer(1).shape == (6, 3, 4) and pool.get_value_buffer(0).dtype == torch.float16

    def test_auto_device_follows_torch(self):
        expected = "cuda" if torch.cuda.is_available() else "cpu"
        assert resolve_device("auto").type == expected
        assert TokenToKVPool(2).mem_state.device.type == expected
        assert TokenToKVPool(2).alloc(1).device.type == expected

    @pytest.mark.parametrize("size", [0, -3, 2.0])
    def test_bad_size_is_refused(self, size):
        with pytest.raises(ValueError):
            TokenToKVPool(size, device="cpu")

    def test_unknown_device_is_refused(self):
        with pytest.raises(ValueError, match="device"):
            resolve_device("tpu9")

    def test_a_gpu_number_past_the_last_gpu_is_refused(self, monkeypatch):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
        assert resolve_device("cuda:1") == torch.device("cuda:1")
        with pytest.raises(ValueError, match="torch sees 2 GPU"):
            resolve_device("cuda:2")


class TestReqToTokenPool:
    def test_alloc_and_free_request_slots(self):
        pool = ReqToTokenPool(3, max_context_len=16, device="cpu")
        assert pool.alloc(2) == [0, 1]
        assert pool.alloc(2) is None and pool.available_size() == 1
        pool.free(0)
        assert pool.alloc() == [0]
        assert pool.req_to_token.shape == (3, 16) and pool.req_to_token.dtype == torch.int64

    @pytest.mark.parametrize("index", [2, 5, -1])
    def test_freeing_a_slot_not_in_use_is_refused(self, index):
        pool = ReqToTokenPool(3, max_context_len=4, device="cpu")
        pool.alloc(2)
        with pytest.raises(PoolError):
            pool.free([0, index])
        assert pool.available_size() == 1


def built():
    """A small tree on a real pool, with one lock and one running request's slots."""
    cache, pool = RadixCache(), TokenToKVPool(32, device="cpu")
    for text in ("Hello_L.A.!", "Hello_L.A.!world", "Bye"):
        new = pool.alloc(len(text))
        pool.free(new[:cache.insert(text, new)])
    cache.inc_ref_counter(cache.match_prefix("Hello_L")[1])
    running = pool.alloc(3)
    check_invariants(cache, pool, held=[running])
    return cache, pool, running


def node_at(cache, text):
    """The node whose path from the root spells ``text`` (found without matching)."""
    node, rest = cache.root_node, tuple(text)
    while rest:
        node = node.children[rest[0]]
        assert rest[:len(node.key)] == node.key
        rest = rest[len(node.key):]
    return node


class TestInvariants:
    """Each broken invariant is caught, on a copy, with a message naming the culprit."""

    CASES = {
        "negative count": ("Hello_L.A.!world", lambda n: setattr(n, "ref_counter", -1), "negative"),
        "child above parent": ("Hello_L.A.!world", lambda n: setattr(n, "ref_counter", 5), "exceeds"),
        "slots short": ("Bye", lambda n: setattr(n, "value", n.value[:1]), "3 tokens but 1 slots"),
        "parent link": ("Bye", lambda n: setattr(n, "parent", n.parent.children["H"]), "parent link"),
        "misfiled edge": ("Bye", lambda n: setattr(n, "key", tuple("Xye")), "filed under"),
    }

    @pytest.mark.parametrize("case", sorted(CASES))
    def test_broken_node_is_named(self, case):
        cache, pool, running = built()
        text, change, words = self.CASES[case]
        broken = copy.deepcopy(cache)
        node = node_at(broken, text)
        change(node)
        with pytest.raises(InvariantError, match=words) as err:
            check_invariants(broken, pool, held=[running])
        assert f"node #{node.id} " in str(err.value)
        check_invariants(cache, pool, held=[running])  # the original is untouched

    def test_wrong_evictable_size(self):
        cache, _, _ = built()
        cache._evictable += 1
        with pytest.raises(InvariantError, match="evictable_size"):
            check_invariants(cache)

    def test_slot_owned_by_two_nodes(self):
        cache, _, _ = built()
        bye = node_at(cache, "Bye")
        bye.value = node_at(cache, "Hello_L.A.!world").value[:3].clone()
        with pytest.raises(InvariantError, match="owned by both") as err:
            check_invariants(cache)
        assert f"#{bye.id}" in str(err.value)

    def test_pool_count_disagrees_with_the_tree(self):
        cache, pool, running = built()
        with pytest.raises(InvariantError, match="slot"):
            check_invariants(cache, pool)  # the running request's slots are not declared
        pool.mem_state[0] += 1
        with pytest.raises(InvariantError, match="slot 0"):
            check_invariants(cache, pool, held=[running])

    def test_slot_freed_under_a_node(self):
        cache, pool, running = built()
        bye = node_at(cache, "Bye")
        pool.free(bye.value)
        with pytest.raises(InvariantError, match=f"node #{bye.id} 'Bye'"):
            check_invariants(cache, pool, held=[running])

    def test_slot_outside_the_pool(self):
        cache, pool, running = built()
        with pytest.raises(InvariantError, match="outside"):
            check_invariants(cache, pool, held=[running, [99]])


class TestMatcherComparison:
    def test_chapter_disagreement_is_reported(self):
        cache = RadixCache()
        cache.insert("Hello_L.A.!", torch.arange(11))
        cache.insert("Hello_L.A.!world", torch.arange(11, 27))
        found = compare_matchers(cache.snapshot(), "Hello_world")
        assert found.fixed.matched == 6 and found.buggy.matched == 11
        assert found.wrong_from == 6 and found.wrong_slots == tuple(range(22, 27))
        assert compare_matchers(cache.snapshot(), "Hello_L.A") is None


def test_importing_the_engine_loads_no_ui_library():
    code = ("import sys, radixviz.cache; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'textual')); "
            "print(','.join(bad)); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"radixviz.cache loaded {done.stdout.strip()} {done.stderr[-300:]}"
