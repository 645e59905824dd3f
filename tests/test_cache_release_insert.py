"""#4, the release's insert: ``RadixCache(strict=False)`` against the release-shaped reference.

The first scheduler inserted ``input + output`` as the key with ``seq_len = len - 1`` slots
as the value. ``strict=False`` must keep such a value exactly as the release did (slice by
key positions, evictable size up by the value's length and down by the key's on delete);
the reference (tests/oracles/naive_radix.py) is written in the release's shape and checks nothing,
so the two must agree step for step on random sequences, drift included.
"""
from __future__ import annotations

import random

import pytest
import torch

from radixviz.cache import InvariantError, RadixCache, check_invariants
from reference_radix import NaiveRadixCache, engine_structure


def lenient_free(log):
    def free(slots):
        log.append(tuple(slots.tolist()))
        return len(slots)
    return free


def run_both(seed: int, steps: int = 120, traced: bool = False):
    rng = random.Random(seed)
    engine, reference = RadixCache(strict=False), NaiveRadixCache()
    if traced:
        engine.observer = lambda event: None   # the traced code paths must agree as well
    next_slot = 0
    locked: list = []
    for _ in range(steps):
        kind = rng.choice(["insert", "insert", "insert", "match", "evict", "lock", "unlock"])
        key = tuple(rng.choice("abc") for _ in range(rng.randint(1, 8)))
        if kind == "insert":
            # the release's scheduler: one slot fewer than the tokens (the last one has no KV yet)
            value = torch.arange(next_slot, next_slot + len(key) - 1, dtype=torch.int64)
            next_slot += len(key)
            assert engine.insert(key, value.clone()) == reference.insert(key, value.clone())
        elif kind == "match":
            got, node = engine.match_prefix(key)
            want, ref_node = reference.match_prefix(key)
            assert got.tolist() == want.tolist()
        elif kind == "evict":
            freed, ref_freed = [], []
            count = rng.randint(1, 6)
            engine.evict(count, lenient_free(freed))
            reference.evict(count, lenient_free(ref_freed))
            assert freed == ref_freed
        elif kind == "lock":
            _, node = engine.match_prefix(key)
            _, ref_node = reference.match_prefix(key)
            assert engine.inc_ref_counter(node) == reference.inc_ref_counter(ref_node)
            locked.append((node, ref_node))
        elif locked:
            node, ref_node = locked.pop(rng.randrange(len(locked)))
            assert engine.dec_ref_counter(node) == reference.dec_ref_counter(ref_node)
        assert engine.evictable_size() == reference.evictable_size()
        assert engine.total_size() == reference.total_size()
        assert engine_structure(engine.root_node)[1:] == reference.structure()[1:]
    return engine


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "traced"])
def test_strict_false_does_what_the_release_did(seed, traced):
    run_both(seed, traced=traced)


def test_the_drift_shows_and_check_invariants_names_it():
    engine = RadixCache(strict=False)
    engine.insert("Hello_L.A.!", torch.arange(10))       # 11 tokens, 10 slots
    assert engine.evictable_size() == 10 and engine.total_size() == 10
    with pytest.raises(InvariantError, match="one slot per token: .* 11 tokens but 10 slots"):
        check_invariants(engine)
    engine.evict(100, lambda slots: len(slots))
    assert engine.evictable_size() == -1                  # up by 10, down by 11


def test_strict_is_the_default_and_refuses_a_short_value():
    with pytest.raises(ValueError, match="one slot per token"):
        RadixCache().insert("abc", torch.arange(2))
    with pytest.raises(ValueError):
        RadixCache(strict=False).insert("abc", torch.arange(4))   # longer is never accepted
