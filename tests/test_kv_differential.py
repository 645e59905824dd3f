"""Namespaces, page hashes and KV events against the reference written from SGLang's file.

For page sizes 1, 2 and 4, with KV events on, Hypothesis draws inserts, matches and locks in
three namespaces (none, ``lora-a``, ``lora-b``), unlocks, evictions and resets. After every step
both caches must agree on the result, on the whole tree including each node's namespace, its
page hashes and the key its parent files it under, and on the KV events queued (every field,
in order). The same keys in different namespaces must never share a node.
"""
from __future__ import annotations

import random

import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

from radixviz.cache import ModernRadixCache, check_modern_invariants
from reference_modern import NaiveModernRadixCache, modern_structure, path_keys
from test_modern_differential import page_patterns

PAGE_SIZES = (1, 2, 4)
NAMESPACES = (None, "lora-a", "lora-b")


def op_strategy(page: int):
    pages = st.lists(st.sampled_from(page_patterns(page)), max_size=5).map("".join)
    tail = st.text(alphabet="ab", max_size=page - 1) if page > 1 else st.just("")
    ns = st.sampled_from(NAMESPACES)
    return st.one_of(
        st.tuples(st.just("insert"), pages, st.integers(0, 2), ns),
        st.tuples(st.just("match"), st.tuples(pages, tail).map("".join), ns),
        st.tuples(st.just("lock"), st.tuples(pages, tail).map("".join), ns),
        st.tuples(st.just("unlock"), st.integers(0, 10)),
        st.tuples(st.just("evict"), st.integers(0, 12)),
        st.tuples(st.just("reset")),
    )


class Pair:
    def __init__(self, page: int, policy: str = "lru"):
        self.engine = ModernRadixCache(page_size=page, eviction_policy=policy, enable_kv_events=True)
        self.reference = NaiveModernRadixCache(page_size=page, eviction_policy=policy, check_ties=True,
                                               enable_kv_cache_events=True)
        self.locks: list = []
        self.next_slot = 1000
        self.events: list = []
        self.check()

    def apply(self, op) -> None:
        e, r = self.engine, self.reference
        kind = op[0]
        if kind == "insert":
            key, priority, ns = op[1:]
            slots = torch.arange(self.next_slot, self.next_slot + len(key), dtype=torch.int64)
            self.next_slot += len(key)
            assert e.insert(key, slots, priority, ns) == r.insert(key, slots.clone(), priority, ns)
        elif kind in ("match", "lock"):
            key, ns = op[1:]
            (es, en), (rs, rn) = e.match_prefix(key, ns), r.match_prefix(key, ns)
            assert es.tolist() == rs.tolist()
            assert path_keys(e.root_node, en) == path_keys(r.root_node, rn)
            assert en is e.root_node or en.extra_key == ns   # a match never leaves its namespace
            if kind == "lock":
                assert e.inc_lock_ref(en) == r.inc_lock_ref(rn) <= 0
                self.locks.append((en, rn))
        elif kind == "unlock" and self.locks:
            en, rn = self.locks.pop(op[1] % len(self.locks))
            assert e.dec_lock_ref(en) == r.dec_lock_ref(rn) >= 0
        elif kind == "evict":
            gone_e, gone_r = [], []
            assert e.evict(op[1], lambda s: gone_e.append(s.tolist())) == \
                r.evict(op[1], lambda s: gone_r.append(s.tolist()))
            assert gone_e == gone_r
        elif kind == "reset":
            e.reset()
            r.reset()
            self.locks.clear()
        self.check()

    def check(self) -> None:
        e, r = self.engine, self.reference
        assert (e.evictable_size(), e.protected_size(), e.total_size()) == \
            (r.evictable_size(), r.protected_size(), r.total_size())
        assert modern_structure(e.root_node, with_keys=True) == r.structure(with_keys=True)
        events = [event.as_dict() for event in e.take_events()]
        assert events == r.take_events()
        self.events.extend(events)
        check_modern_invariants(e)
        for node in _walk(e.root_node):   # no node mixes namespaces: its subtree keeps its key
            for child in node.children.values():
                assert node is e.root_node or child.extra_key == node.extra_key


def _walk(root):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())


@pytest.mark.parametrize("page", PAGE_SIZES)
def test_namespaces_hashes_and_events_match_reference(page):
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(op_strategy(page), max_size=40))
    def run(ops):
        pair = Pair(page)
        for op in ops:
            pair.apply(op)

    run()


@pytest.mark.parametrize("policy", ("lru", "lfu", "priority"))
@pytest.mark.parametrize("page", PAGE_SIZES)
def test_long_seeded_run_with_namespaces_matches_reference(page, policy):
    rng = random.Random(f"kv-{page}-{policy}")
    patterns = page_patterns(page)
    pair = Pair(page, policy)
    for _ in range(300):
        key = "".join(rng.choice(patterns) for _ in range(rng.randint(0, 6)))
        ns = rng.choice(NAMESPACES)
        roll = rng.random()
        if roll < 0.4:
            pair.apply(("insert", key, rng.randint(0, 3), ns))
        elif roll < 0.6:
            pair.apply(("match", key + "a" * rng.randint(0, page - 1), ns))
        elif roll < 0.72:
            pair.apply(("lock", key, ns))
        elif roll < 0.85:
            pair.apply(("unlock", rng.randint(0, 10)))
        elif roll < 0.99:
            pair.apply(("evict", rng.randint(1, 15)))
        else:
            pair.apply(("reset",))
    kinds = {event["kind"] for event in pair.events}
    assert kinds == {"stored", "removed", "cleared"}, kinds
