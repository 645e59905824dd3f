"""Namespaces, page hashes and KV events of the 2026 engine, case by case.

The hashes are checked against hashlib directly (SHA-256 over 4-byte little-endian ids,
seeded with the previous page's digest); the random differential runs are in
test_kv_differential.py.
"""
from __future__ import annotations

import hashlib

import pytest
import torch

from radixviz.cache import (AllBlocksCleared, BlockRemoved, BlockStored, ModernRadixCache,
                            TokenToKVPool, get_hash_str, hash_str_to_int64)
from radixviz.cache.engines import open_engine
from radixviz.cache.hashes import short_hash, token_id


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def le(*ids) -> bytes:
    return b"".join(i.to_bytes(4, "little") for i in ids)


def test_page_hash_is_sha256_of_little_endian_ids_chained():
    first = get_hash_str([1, 2])
    assert first == sha(le(1, 2))
    assert get_hash_str([3], first) == sha(bytes.fromhex(first) + le(3))
    assert get_hash_str("ab") == sha(le(ord("a"), ord("b")))   # a character hashes as its code point
    assert token_id("é") == 0xE9


def test_block_hash_is_the_first_16_hex_digits_as_a_signed_int64():
    assert hash_str_to_int64("7" + "f" * 15 + "0" * 48) == 2 ** 63 - 1
    assert hash_str_to_int64("8" + "0" * 63) == -2 ** 63
    assert hash_str_to_int64("f" * 64) == -1
    assert short_hash("0123456789abcdef") == "01234567"


def test_same_tokens_in_two_namespaces_never_share_a_node():
    cache = ModernRadixCache()
    cache.insert("abc", torch.arange(3))
    cache.insert("abc", torch.arange(3, 6), extra_key="lora-a")
    assert cache.insert("abd", torch.arange(6, 9), extra_key="lora-a") == 2
    assert set(cache.root_node.children) == {"a", ("lora-a", "a")}
    assert cache.match_prefix("abc", "lora-b")[0].tolist() == []
    assert cache.match_prefix("abc", "lora-a")[0].tolist() == [3, 4, 5]
    assert cache.match_prefix("abc")[0].tolist() == [0, 1, 2]
    slots, node = cache.match_prefix("abd", "lora-a")
    assert slots.tolist() == [3, 4, 8] and node.extra_key == "lora-a"
    assert cache.total_size() == 7


def test_hashes_wait_until_needed_without_events():
    cache = ModernRadixCache(2)
    cache.insert("aabb")
    node = cache.root_node.children[("a", "a")]
    assert node.hash_value is None and node.get_last_hash_value() is None
    assert cache.take_events() == []
    assert cache.snapshot().root.children[0].hash_value is None


def test_a_new_cache_with_events_starts_with_all_cleared():
    cache = ModernRadixCache(enable_kv_events=True)
    assert cache.take_events() == [AllBlocksCleared()]
    assert cache.take_events() == []


def test_stored_events_one_a_page_chained_and_a_split_sends_none():
    cache = ModernRadixCache(4, enable_kv_events=True)
    cache.take_events()
    cache.insert("aaaabbbb")
    node = cache.root_node.children[tuple("aaaa")]
    h1 = sha(le(*map(ord, "aaaa")))
    h2 = sha(bytes.fromhex(h1) + le(*map(ord, "bbbb")))
    assert node.hash_value == [h1, h2]
    b1, b2 = hash_str_to_int64(h1), hash_str_to_int64(h2)
    assert cache.take_events() == [BlockStored((b1,), None, tuple("aaaa"), 4),
                                   BlockStored((b2,), b1, tuple("bbbb"), 4)]
    cache.match_prefix("aaaacccc")          # splits the edge after one page
    assert cache.take_events() == []
    upper = cache.root_node.children[tuple("aaaa")]
    assert upper.hash_value == [h1] and upper.children[tuple("bbbb")].hash_value == [h2]
    cache.insert("aaaacccc")
    h3 = sha(bytes.fromhex(h1) + le(*map(ord, "cccc")))
    assert cache.take_events() == [BlockStored((hash_str_to_int64(h3),), b1, tuple("cccc"), 4)]


def test_eviction_removes_each_page_by_the_hash_it_was_stored_under():
    cache = ModernRadixCache(2, enable_kv_events=True)
    cache.insert("aabbcc")
    stored = [e.block_hashes for e in cache.take_events() if e.kind == "stored"]
    cache.evict(6, lambda slots: None)
    removed = cache.take_events()
    assert all(isinstance(e, BlockRemoved) for e in removed)
    assert [e.block_hashes for e in removed] == stored
    cache.reset()
    assert [e.kind for e in cache.take_events()] == ["cleared"]


def test_page_hashes_do_not_name_the_namespace():
    # upstream's events carry lora_id=None and the hash covers the tokens only
    cache = ModernRadixCache(2, enable_kv_events=True)
    cache.insert("aabb")
    cache.insert("aabb", extra_key="lora-a")
    stored = [e for e in cache.take_events() if e.kind == "stored"]
    assert [e.block_hashes for e in stored[:2]] == [e.block_hashes for e in stored[2:]]


def test_an_unhashable_token_is_refused_before_anything_changes():
    cache = ModernRadixCache(enable_kv_events=True)
    cache.take_events()
    with pytest.raises(ValueError, match="4 bytes"):
        cache.insert((1, 2 ** 32), torch.arange(2))
    with pytest.raises(ValueError, match="no id"):
        cache.insert(("ab",), torch.arange(1))
    assert cache.total_size() == 0 and cache.take_events() == []


def test_the_facade_carries_namespaces_and_events():
    pool = TokenToKVPool(32, device="cpu")
    engine = open_engine("2026", pool, page_size=2, kv_events=True)
    assert engine.spec.namespaces and engine.spec.kv_events
    assert "kv events" in engine.spec.badge(engine.settings)
    done = engine.insert(tuple("abcde"), pool.alloc(5), extra_key="lora-a")
    assert done.tail.numel() == 1 and pool.used_size() == 4
    assert [e.kind for e in engine.take_events()] == ["cleared", "stored", "stored"]
    assert len(engine.match(tuple("abcd"))[0]) == 0
    assert len(engine.match(tuple("abcd"), extra_key="lora-a")[0]) == 4
    assert engine.preview(tuple("abcd"), "lora-a").matched == 4
    assert engine.preview(tuple("abcd")).matched == 0
    engine.check_invariants()


def test_an_engine_without_namespaces_refuses_an_extra_key_and_frees_the_slots():
    pool = TokenToKVPool(16, device="cpu")
    engine = open_engine("2024", pool)
    with pytest.raises(ValueError, match="no namespaces"):
        engine.insert(tuple("ab"), pool.alloc(2), extra_key="lora-a")
    assert pool.used_size() == 0 and engine.total_size() == 0
    with pytest.raises(ValueError, match="no namespaces"):
        engine.match(tuple("ab"), extra_key="lora-a")
    assert engine.take_events() == []


def test_locks_work_inside_a_namespace():
    cache = ModernRadixCache(enable_kv_events=True)
    cache.insert("abc", torch.arange(3), extra_key="t1")
    _, node = cache.match_prefix("ab", "t1")
    assert cache.inc_lock_ref(node) == -2
    assert cache.dec_lock_ref(node) == 2
