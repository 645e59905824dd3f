"""Test helpers for the host-tier engine: its reference and a driver that runs both in step.

The reference lives in ``tests/oracles/naive_hicache.py``, written from the shape of SGLang's
``hiradix_cache.py`` of March 2026. ``HiPair`` drives the engine (behind the facade, on a
real device pool) and the reference with the same operations and, after each, holds them to
the same trees, slots on both tiers, locks, host locks, sizes, candidates and copies in flight.
"""
from __future__ import annotations

from collections import Counter

from oracles.naive_hicache import NaiveHiRadixCache
from radixviz.cache import TokenToKVPool
from radixviz.cache.engines import open_engine
from radixviz.engines.hicache.engine import check_hicache_invariants
from reference_modern import path_keys

__all__ = ["HiPair", "NaiveHiRadixCache", "hicache_structure"]


def hicache_structure(node, root=None) -> tuple:
    """The same nested tuples as ``NaiveHiRadixCache.structure``, from the engine's nodes."""
    root = node if root is None else root
    if node is root:
        value, host = (), ()
    else:
        value = None if node.value is None else tuple(node.value.tolist())
        host = None if node.host_value is None else tuple(node.host_value.tolist())
    return (tuple(node.key), value, host, node.lock_ref, node.host_ref_counter, node.hit_count,
            node.priority, node.creation_time, node.last_access_time,
            tuple(hicache_structure(child, root) for child in node.children.values()))


class HiPair:
    """The engine and the reference, driven together and compared after each step."""

    def __init__(self, page: int, eviction: str, write_policy: str, device_size: int,
                 host_size: int | None = None):
        self.pool = TokenToKVPool(device_size, device="cpu")
        self.engine = open_engine("hicache", self.pool, page_size=page, eviction_policy=eviction,
                                  host_size=host_size, write_policy=write_policy)
        host = self.engine.host_pool.size
        self.reference = NaiveHiRadixCache(device_size, host, page, eviction, write_policy, check_ties=True)
        self.locks: list = []
        self.steps = 0
        self.seen: Counter = Counter()   # what the run exercised, by kind of effect

    @property
    def cache(self):
        return self.engine.cache

    def path(self, node, which="engine") -> tuple:
        root = self.cache.root_node if which == "engine" else self.reference.root_node
        return path_keys(root, node)

    def apply(self, op) -> None:
        e, r = self.engine, self.reference
        kind = op[0]
        before = dict(self.cache.moved.as_dict())
        if kind == "insert":
            self._insert(op[1], op[2])
        elif kind in ("match", "lock", "load"):
            em, rm = e.match_tiers(op[1]), r.match_prefix(op[1])
            assert em.device_indices.tolist() == rm[0].tolist()
            assert em.host_hit_length == rm[3]
            assert self.path(em.last_device_node) == self.path(rm[1], "ref")
            assert self.path(em.last_host_node) == self.path(rm[2], "ref")
            self.seen["host hit"] += em.host_hit_length > 0
            if kind == "lock":
                assert e.lock(em.last_device_node) == r.inc_lock_ref(rm[1]) <= 0
                self.locks.append((em.last_device_node, rm[1]))
            elif kind == "load" and em.host_hit_length:
                (es, en), (rs, rn) = e.load_back(em.last_host_node), r.init_load_back(rm[2])
                assert es.tolist() == rs.tolist() and self.path(en) == self.path(rn, "ref")
                e.start_loads()
                r.ready_to_load_host_cache()
        elif kind == "unlock" and self.locks:
            en, rn = self.locks.pop(op[1] % len(self.locks))
            assert e.unlock(en) == r.dec_lock_ref(rn) >= 0
        elif kind == "evict":
            assert e.cache.evict(op[1]) == r.evict(op[1])
        elif kind == "evict_host":
            assert e.evict_host(op[1]) == r.evict_host(op[1])
        elif kind in ("sync", "check"):
            e.sync() if kind == "sync" else e.check_events()
            r.check_hicache_events()
        after = self.cache.moved.as_dict()
        self.seen.update({k: int(after[k] > before[k]) for k in after})
        self.check()

    def _insert(self, key: str, priority: int) -> None:
        e, r = self.engine, self.reference
        need = len(key)
        if need > self.pool.available_size():
            short = need - self.pool.available_size()
            assert e.cache.evict(short) == r.evict(short)
        assert self.pool.available_size() == r.device.available_size()
        if need > self.pool.available_size():
            return
        slots, ref_slots = self.pool.alloc(need), r.device.alloc(need)
        assert slots.tolist() == ref_slots.tolist()
        done = e.insert(key, slots, priority)
        prefix = r.insert(key, ref_slots.clone(), priority)
        r.device.free(ref_slots[:prefix])
        assert done.prefix_len == prefix

    def check(self) -> None:
        e, r, cache = self.engine, self.reference, self.cache
        self.steps += 1
        assert (e.evictable_size(), e.protected_size(), e.total_size()) == \
            (r.evictable_size(), r.protected_size(), r.total_size())
        assert cache._clock == r.clock.now
        assert hicache_structure(cache.root_node) == r.structure()
        free = {i for i, count in enumerate(self.pool.refcounts()) if count == 0}
        assert free == r.device.free_set
        assert e.host_pool.free_slots.tolist() == r.host.free_slots.tolist()
        for mine, theirs in ((cache.ongoing_write_through, r.ongoing_write_through),
                             (cache.ongoing_load_back, r.ongoing_load_back),
                             (cache.evictable_leaves, r.evictable_leaves),
                             (cache.evictable_host_leaves, r.evictable_host_leaves)):
            mine = mine.values() if isinstance(mine, dict) else mine
            theirs = theirs.values() if isinstance(theirs, dict) else theirs
            assert {self.path(n) for n in mine} == {self.path(n, "ref") for n in theirs}
        check_hicache_invariants(cache, self.pool, [])
        self.seen["in flight"] += cache.in_flight() > 0
        self.seen["host only"] += any(n.value is None for n in _walk(cache.root_node))


def _walk(root):
    stack = list(root.children.values())
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())
