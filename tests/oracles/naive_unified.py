"""A plain re-reading of SGLang v0.5.23's ``UnifiedRadixCache`` (``mem_cache/unified_radix_cache.py``)
and the pools it frees into (``allocator/token.py``, ``paged.py``, ``swa.py``, ``mamba.py``),
device tier only, over the reference tree of naive_unified_tree.py.

The cache applies the tree's actions at each pause of the insert, drives eviction one
component at a time and frees each step's slots before the next, and copies a matched Mamba
state into the request's slot. Free lists are Python lists here (SGLang's are tensors): slot
0 is padding; a freed slot goes to the back, a freed page to the front; the SWA pool pairs
each Full slot with a peer through a mapping. Shares no code with ``radixviz``.
"""
from __future__ import annotations

import torch

from .naive_unified_nodes import FULL, MAMBA, SWA
from .naive_unified_tree import RefTreeCore


class FreeList:
    def __init__(self, size, page):
        self.page = page
        self.free = list(range(1, size // page + 1))  # page numbers

    def available(self):
        return len(self.free) * self.page

    def alloc(self, n):
        pages = -(-n // self.page)
        if pages > len(self.free):
            return None
        got, self.free = self.free[:pages], self.free[pages:]
        slots = [p * self.page + i for p in got for i in range(self.page)]
        return torch.tensor(slots[:n], dtype=torch.int64)

    def give_back(self, pages):
        if self.page == 1:
            self.free = self.free + list(pages)
        else:
            self.free = list(pages) + self.free

    def free_segment(self, slots):
        self.give_back([s // self.page for s in slots.tolist()[::self.page]])

    def slots(self):
        return [p * self.page + i for p in self.free for i in range(self.page)]


class SWAPools:
    def __init__(self, size, swa_size, page):
        self.page = page
        self.full = FreeList(size, page)
        self.swa = FreeList(swa_size, page)
        self.mapping = [0] * (size + page + 1)

    def alloc(self, n):
        aligned = -(-n // self.page) * self.page
        if aligned > self.full.available() or aligned > self.swa.available():
            return None
        f, s = self.full.alloc(aligned), self.swa.alloc(aligned)
        for a, b in zip(f.tolist(), s.tolist()):
            self.mapping[a] = b
        return f[:n]

    def translate(self, full):
        return torch.tensor([self.mapping[x] for x in full.tolist()], dtype=torch.int64)

    def free_swa_segment(self, full):
        reps = full.tolist()[::self.page]
        peers = [self.mapping[r] for r in reps]
        assert all(p > 0 for p in peers), "freeing an SWA peer that is not there"
        for r in reps:
            base = r // self.page * self.page
            for i in range(self.page):
                self.mapping[base + i] = 0
        self.swa.give_back([p // self.page for p in peers])

    def free_segment(self, full):
        self.free_swa_segment(full)
        self.full.free_segment(full)

    def free_full_segment(self, full):
        assert all(self.mapping[x] == 0 for x in full.tolist())
        self.full.free_segment(full)


class MambaSlots:
    def __init__(self, size):
        self.size = size
        self.free = list(range(1, size + 1))
        self.states = torch.zeros((size + 1, 4))

    def alloc(self, n):
        if n > len(self.free):
            return None
        got, self.free = self.free[:n], self.free[n:]
        return torch.tensor(got, dtype=torch.int64)

    def give_back(self, slots):
        self.free = self.free + slots.reshape(-1).tolist()


class RefUnifiedCache:
    def __init__(self, types, page=1, window=None, chunk=None, kv_size=256, swa_size=None, mamba_size=32,
                 policy="lru", max_states=-1):
        self.types = tuple(types)
        self.pools = SWAPools(kv_size, swa_size or kv_size, page) if SWA in types else FreeList(kv_size, page)
        self.mamba_alloc = MambaSlots(mamba_size) if MAMBA in types else None
        self.core = RefTreeCore(self.types, page, window, chunk if MAMBA in types else None, policy, max_states)
        self.core.cache = self

    # ---- match, insert

    def match(self, key, cow=False, req=None):
        result = self.core.match_prefix(list(key))
        for c in self.core.comps:
            c.finalize_cache({"cow_mamba": cow, "req": req}, result)
        return result

    def insert(self, params):
        params = dict(params)
        params["key"] = list(params["key"])
        params.setdefault("evicted", {})
        params.setdefault("prev_prefix_len", 0)
        try:
            actions, result = self.core.begin_insert(params)
            while True:
                self.apply_all(actions)
                if result is not None:
                    return result
                actions, result = self.core.advance()
        finally:
            self.apply_all(self.core.end_insert())

    def apply_all(self, actions):
        for action in list(actions):
            self.apply(action)
        actions.clear()

    def apply(self, action):
        kind = action[0]
        if kind == "free_kv":
            for t in action[1]:
                self.pools.free_segment(t)
        elif kind == "free_kv_full_only":
            for t in action[1]:
                (self.pools.free_full_segment if SWA in self.types else self.pools.free_segment)(t)
        elif kind == "swa_rebuild":
            self.core.set_value(action[1], SWA, self.pools.translate(action[2]))
        elif kind == "swa_recover_locked":
            node, kept, incoming = action[1:]
            swa = self.pools.translate(incoming)
            for x in incoming.tolist():
                self.pools.mapping[x] = 0
            for a, b in zip(kept.tolist(), swa.tolist()):
                self.pools.mapping[a] = b
            self.pools.free_full_segment(incoming)
            self.core.set_value(node, SWA, swa)
        elif kind == "mamba_cap":
            frees = {}
            self.core.comp(MAMBA).cap_states(action[1], frees)
            self.free_values(frees)
        else:
            raise AssertionError(kind)

    def free_values(self, frees):
        for ct, values in frees.items():
            for t in values:
                if ct == FULL:
                    (self.pools.full if SWA in self.types else self.pools).free_segment(t)
                elif ct == SWA:
                    self.pools.free_swa_segment(t)
                else:
                    self.mamba_alloc.give_back(t)

    # ---- eviction

    def available(self, ct):
        if ct == FULL:
            return (self.pools.full if SWA in self.types else self.pools).available()
        if ct == SWA:
            return self.pools.swa.available()
        return len(self.mamba_alloc.free)

    def evict(self, full=0, swa=0, mamba=0, targets=None):
        asked = {FULL: full, SWA: swa, MAMBA: mamba}
        tracker = dict.fromkeys(self.types, 0)
        core = self.core

        def reached(ct):
            return targets is not None and ct in targets and self.available(ct) >= targets[ct]

        for ct in self.types:
            to_target = ct == FULL and asked[ct] > 0 and targets is not None and ct in targets
            if reached(ct) or (not to_target and tracker[ct] >= asked[ct]):
                continue
            quota = max(asked[ct], tracker[ct] + core.evictable[FULL]) if to_target else asked[ct]
            core.comp(ct).walk_start(quota)
            while True:
                node, delta, frees, actions, progress = core.walk_next(ct, tracker)
                self.free_values(frees)
                self.apply_all(actions)
                for k, v in delta.items():
                    tracker[k] += v
                if node is None:
                    if not progress:
                        break
                else:
                    delta, frees = core.evict_leaf(node)
                    self.free_values(frees)
                    for k, v in delta.items():
                        tracker[k] += v
                if reached(ct):
                    break
        return tracker[FULL], tracker.get(SWA, 0), tracker.get(MAMBA, 0)

    def evict_for_alloc(self, full=0, swa=0, mamba=0):
        asked = {FULL: full, SWA: swa, MAMBA: mamba}
        targets = {ct: self.available(ct) + n for ct, n in asked.items() if n > 0 and ct in self.types}
        return self.evict(full, swa, mamba, targets)

    # ---- locks

    def inc_lock_ref(self, node, skip=()):
        return self.core.inc_lock_ref(node, skip)

    def dec_lock_ref(self, node, receipt, skip_swa=False):
        self.core.dec_lock_ref(node, receipt, skip_swa)

    def release_swa(self, node, receipt):
        self.free_values(self.core.dec_swa_lock_only(node, receipt))

    def sizes(self):
        return {ct: (self.core.evictable[ct], self.core.protected[ct]) for ct in self.types}
