"""The unified engine against the reference written from SGLang v0.5.23's files, on random runs.

For each mix of components (full; full+swa; full+mamba; full+swa+mamba), page sizes 1, 2 and
4 and two variants (an SWA window of 3 or 8 tokens; a Mamba state spacing of one page or
four), seeded runs drive both caches as SGLang's scheduler would: requests that match (a
Mamba match copies the state into the request's slot), lock, take slots (evicting for them
when the pool is short), give up the SWA KV that left their window, insert and move their
lock to the new node; bare matches; early SWA releases; unlocks; evictions of each component.
After every step both must agree on what the call returned, the tree (edges, every node's
data per component, tombstones, locks, window stamps, hit counts, priorities, the order of
access and creation times), each component's sizes and LRU order, and the pools (free lists,
the SWA pairing, Mamba slots and states); the engine's invariants and its snapshot must hold.

RADIXVIZ_UNIFIED_DIFF_SEEDS (default 2) and RADIXVIZ_UNIFIED_DIFF_STEPS (default 60) run longer.
"""
from __future__ import annotations

import os
import random

import pytest
import torch

from radixviz.engines.unified.cache import UnifiedRadixCache
from radixviz.engines.unified.cache_params import EvictParams, InsertParams, MatchPrefixParams, Req
from radixviz.engines.unified.invariants import check_unified_invariants
from radixviz.engines.unified.node import ComponentType as CT
from reference_unified import (RefUnifiedCache, engine_tree, path_of, pools_of_engine, pools_of_reference,
                               ref_tree)

SEEDS = int(os.environ.get("RADIXVIZ_UNIFIED_DIFF_SEEDS", "2"))
STEPS = int(os.environ.get("RADIXVIZ_UNIFIED_DIFF_STEPS", "60"))
MIXES = {"full": (CT.FULL,), "full+swa": (CT.FULL, CT.SWA), "full+mamba": (CT.FULL, CT.MAMBA),
         "full+swa+mamba": (CT.FULL, CT.SWA, CT.MAMBA)}
COUNTS: dict = {}   # steps run per mix, for the note (printed with -s)


def patterns(page: int) -> list:
    # pages that agree on all but their tail, so edges part ways inside a page as well
    if page == 1:
        return [("a",), ("b",), ("c",)]
    return [tuple("a" * page), tuple("a" * (page - 1) + "b"), tuple("b" + "a" * (page - 1))]


class Pair:
    def __init__(self, mix: str, page: int, variant: int, seed: int):
        types = MIXES[mix]
        self.types, self.page, self.rng = types, page, random.Random(f"{mix}/{page}/{variant}/{seed}")
        window = (3, 8)[variant] if CT.SWA in types else None
        chunk = page * (1, 4)[variant]
        kv, swa_kv, mamba = 24 * page, 20 * page, 6
        self.engine = UnifiedRadixCache(components=types, page_size=page, sliding_window_size=window,
                                        mamba_cache_chunk_size=chunk, kv_size=kv, swa_kv_size=swa_kv,
                                        mamba_size=mamba, mamba_max_states_per_path=(-1, 2)[variant])
        self.ref = RefUnifiedCache(types, page, window, chunk, kv, swa_kv, mamba, max_states=(-1, 2)[variant])
        self.locks: list = []   # (engine TreeLock, reference node, reference receipt, swa released)
        self.window = window

    # ---- drawing

    def key(self, short: bool = False) -> tuple:
        pages = [self.rng.choice(patterns(self.page)) for _ in range(self.rng.randint(0, 3 if short else 7))]
        tail = tuple(self.rng.choice("ab") for _ in range(self.rng.randint(0, self.page - 1)))
        return sum(pages, ()) + (tail if short else ())

    # ---- steps

    def step(self) -> None:
        kind = self.rng.choice(("request", "request", "request", "match", "lock", "unlock", "unlock",
                                "release_swa", "evict"))
        getattr(self, kind)()

    def match(self, key: tuple | None = None, req=None, ref_req=None):
        key = self.key(short=True) if key is None else key
        cow = req is not None and CT.MAMBA in self.types
        got = self.engine.match_prefix(MatchPrefixParams(key, cow_mamba=cow, req=req))
        want = self.ref.match(key, cow=cow, req=ref_req)
        assert got.device_prefix_len == want["device_prefix_len"]
        assert got.device_indices.tolist() == want["indices"].tolist()
        assert path_of(self.engine.resolve_node_handle(got.best_match_node)) == path_of(want["best"])
        assert got.full_kv_hit_length == want["full_kv_hit_length"]
        assert got.swa_branching_seqlen == want["swa_branching_seqlen"]
        assert got.mamba_branching_seqlen == want["mamba_branching_seqlen"]
        return got, want

    def lock(self, got=None, want=None) -> None:
        if got is None:
            got, want = self.match()
        elock = self.engine.lock(got.best_match_node)
        receipt = self.ref.inc_lock_ref(want["best"])
        assert elock.receipt.component_lock_uuids.get(CT.SWA) == _norm(receipt["uuids"].get(CT.SWA))
        self.locks.append([elock, want["best"], receipt, False])

    def unlock(self) -> None:
        if not self.locks:
            return
        elock, rnode, receipt, released = self.locks.pop(self.rng.randrange(len(self.locks)))
        self.engine.unlock(elock)
        self.ref.dec_lock_ref(rnode, receipt, skip_swa=released)

    def release_swa(self) -> None:
        if not self.locks or CT.SWA not in self.types:
            return
        held = self.locks[self.rng.randrange(len(self.locks))]
        if held[3]:
            return
        self.engine.release_swa(held[0])
        self.ref.release_swa(held[1], held[2])
        held[3] = True

    def evict(self) -> None:
        amounts = [self.rng.randint(0, 6 * self.page) if ct in self.types else 0 for ct in (CT.FULL, CT.SWA)]
        amounts.append(self.rng.randint(0, 2) if CT.MAMBA in self.types else 0)
        got = self.engine.evict(EvictParams(*amounts))
        assert (got.num_tokens_evicted, got.swa_num_tokens_evicted, got.mamba_num_evicted) == self.ref.evict(*amounts)

    def request(self) -> None:
        """A request from admission to its insert, as SGLang's scheduler drives the cache."""
        key = self.key()
        req, ref_req = Req(), {}
        if CT.MAMBA in self.types and not self.mamba_admissible():
            return
        got, want = self.match(key, req, ref_req)
        prefix = got.device_prefix_len
        self.lock(got, want)  # the admission lock, held while the request runs
        need = len(key) - prefix
        own = self.alloc_both(need)
        if own is None:
            self.drop_request(req, ref_req)
            return
        state = self.state_slot(req, ref_req, key)
        if state is None:
            self.free_both(own)
            self.drop_request(req, ref_req)
            return
        evicted = 0
        if self.window is not None and self.rng.random() < 0.5 and need:
            # the request gave up the SWA KV of its own tokens that left the window
            evicted = prefix + self.rng.randint(0, need // self.page) * self.page
            if evicted > prefix:
                self.engine.token_to_kv_pool_allocator.free_swa_segment(own[:evicted - prefix])
                self.ref.pools.free_swa_segment(own[:evicted - prefix].clone())
        value = torch.cat([got.device_indices, own])
        params = InsertParams(key=key, value=value, prev_prefix_len=prefix, mamba_value=state)
        if evicted:
            params.set_evicted_seqlen(CT.SWA, evicted)
        ref_params = {"key": key, "value": value.clone(), "prev_prefix_len": prefix,
                      "evicted": {CT.SWA: evicted} if evicted else {}, "mamba_value": state}
        got_insert = self.engine.insert(params)
        want_insert = self.ref.insert(ref_params)
        assert got_insert.prefix_len == want_insert["prefix_len"]
        assert got_insert.mamba_exist == want_insert["mamba_exist"]
        new_node = self.engine.resolve_node_handle(got_insert.last_device_node)
        assert path_of(new_node) == path_of(want_insert["last"])
        if state is not None and got_insert.mamba_exist:
            self.engine.mamba_pool.free(state)
            self.ref.mamba_alloc.give_back(state.clone())
        # the lock moves to the node the insert ended on (SGLang's checkpoint)
        elock, rnode, receipt, released = self.locks.pop()
        self.engine.unlock(elock)
        self.ref.dec_lock_ref(rnode, receipt, skip_swa=released)
        if self.rng.random() < 0.5:
            self.lock_node(new_node, want_insert["last"])

    def mamba_admissible(self) -> bool:
        """The scheduler admits a request only if a Mamba slot is free or can be made free:
        here, one free, or two unlocked states to evict (the match's own may be one of them)."""
        return self.engine.mamba_pool.available_size() > 0 or self.engine.mamba_evictable_size() >= 2

    def lock_node(self, node, rnode) -> None:
        elock = self.engine.lock(node.id)
        receipt = self.ref.inc_lock_ref(rnode)
        assert elock.receipt.component_lock_uuids.get(CT.SWA) == _norm(receipt["uuids"].get(CT.SWA))
        self.locks.append([elock, rnode, receipt, False])

    def drop_request(self, req, ref_req) -> None:
        if req.mamba_pool_idx is not None:
            self.engine.mamba_pool.free(req.mamba_pool_idx.reshape(1))
            self.ref.mamba_alloc.give_back(torch.tensor([ref_req["mamba"]]))
        elock, rnode, receipt, released = self.locks.pop()
        self.engine.unlock(elock)
        self.ref.dec_lock_ref(rnode, receipt, skip_swa=released)

    def alloc_both(self, need: int):
        if need == 0:
            return torch.empty(0, dtype=torch.int64)
        alloc = self.engine.token_to_kv_pool_allocator
        own = alloc.alloc(need)
        want = self.ref.pools.alloc(need)
        assert (own is None) == (want is None)
        if own is None:
            swa = need if CT.SWA in self.types else 0
            got = self.engine.evict_for_alloc(EvictParams(num_tokens=need, swa_num_tokens=swa))
            assert (got.num_tokens_evicted, got.swa_num_tokens_evicted, got.mamba_num_evicted) == \
                self.ref.evict_for_alloc(need, swa, 0)
            own, want = alloc.alloc(need), self.ref.pools.alloc(need)
            assert (own is None) == (want is None)
        if own is not None:
            assert own.tolist() == want.tolist()
        return own

    def free_both(self, own) -> None:
        self.engine.token_to_kv_pool_allocator.free_segment(own)
        self.ref.pools.free_segment(own.clone())

    def state_slot(self, req, ref_req, key):
        """The state the request hands the tree: its copy of the matched one, or a new slot."""
        if CT.MAMBA not in self.types:
            return None
        if req.mamba_pool_idx is None:
            slot = self.engine.mamba_pool.alloc(1)
            ref_slot = self.ref.mamba_alloc.alloc(1)
            if slot is None:
                got = self.engine.evict_for_alloc(EvictParams(mamba_num=1))
                assert (got.num_tokens_evicted, got.swa_num_tokens_evicted, got.mamba_num_evicted) == \
                    self.ref.evict_for_alloc(0, 0, 1)
                slot, ref_slot = self.engine.mamba_pool.alloc(1), self.ref.mamba_alloc.alloc(1)
            if slot is None:
                return None
            assert slot.tolist() == ref_slot.tolist()
        else:
            slot = req.mamba_pool_idx.reshape(1)
            assert int(slot) == int(ref_req["mamba"])
        # the request ran its tokens: its state now sums them up
        fingerprint = torch.tensor([len(key), sum(map(ord, key)) % 97, hash(key) % 89, 1.0])
        self.engine.mamba_pool.states[slot] = fingerprint
        self.ref.mamba_alloc.states[slot] = fingerprint
        return slot

    # ---- the comparison after every step

    def compare(self) -> None:
        engine, ref = self.engine, self.ref
        assert engine_tree(engine) == ref_tree(ref)
        for ct in self.types:
            assert (engine.component_evictable_size(ct), engine.component_protected_size(ct)) == ref.sizes()[ct]
            if ct != CT.FULL:
                lru = engine.tree_core.lru_lists[ct]
                got = [path_of(engine.resolve_node_handle(i)) for i in lru.order()]
                assert got == [path_of(n) for n in ref.core.lrus[ct].mru_to_lru()]
        assert pools_of_engine(engine) == pools_of_reference(ref)
        check_unified_invariants(engine, held={})
        leaves = {path_of(n) for n in engine.tree_core.evictable_device_leaves}
        assert leaves == {path_of(n) for n in ref.core.leaves}
        # the cached snapshot is the one a fresh walk would build
        cached = engine.snapshot().root
        clear_snapshots(engine.root_node)
        assert engine.snapshot().root == cached


def _norm(ref_uuid):
    return None if ref_uuid is None else ref_uuid - 100_000_000_000_000


def clear_snapshots(root) -> None:
    """Drop every cached snapshot, so the next one is built from the live nodes."""
    stack = [root]
    while stack:
        node = stack.pop()
        node._snap = None
        stack.extend(node.children.values())


@pytest.mark.parametrize("variant", (0, 1))
@pytest.mark.parametrize("page", (1, 2, 4))
@pytest.mark.parametrize("mix", list(MIXES))
def test_engine_agrees_with_reference(mix: str, page: int, variant: int) -> None:
    for seed in range(SEEDS):
        pair = Pair(mix, page, variant, seed)
        for _ in range(STEPS):
            pair.step()
            pair.compare()
        while pair.locks:   # every lock released, the tree must be all evictable
            pair.unlock()
            pair.compare()
        COUNTS[mix] = COUNTS.get(mix, 0) + STEPS
    assert pair.engine.protected_size() == 0
