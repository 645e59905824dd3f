"""The engine against the independent reference on random operation sequences.

A Hypothesis state machine drives both caches the way the scheduler does (match, lock,
allocate, insert and free duplicates, unlock, evict under a small pool) with a three-letter
alphabet so prefixes collide and edges split often, flipping between the fixed and the
pre-#7 matcher. After every step the two trees must be identical, down to reference counts
and access times, and every invariant must hold against the real torch pool.

A third cache, the same engine with an observer attached and detached at random, runs
alongside: traced evictions run the release's code, untraced ones a lasting leaf heap, and
both must give the same result.
"""
from __future__ import annotations

import os

import torch
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from radixviz.cache import RadixCache, TokenToKVPool, check_invariants, preview_match
from reference_radix import NaiveRadixCache, PoolModel, engine_path_keys, engine_structure

POOL_SIZE = 40
KEYS = st.text(alphabet="abc", max_size=10)


class CacheAgainstReference(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.engine = RadixCache()
        self.reference = NaiveRadixCache()
        self.watched = RadixCache()       # observer on and off; frees into its own model pool
        self.watched_pool = PoolModel(POOL_SIZE)
        self.events = 0
        self.pool = TokenToKVPool(POOL_SIZE, device="cpu")
        self.model = PoolModel(POOL_SIZE)
        self.locks: list = []      # (engine, reference, watched node) locked by inc_ref_counter
        self.running: list = []    # (key, engine slots, model slots) allocated, not yet inserted
        self.stored: dict = {}     # every cached prefix -> the slot of its last token
        self.known: list = []      # keys inserted so far, to query again

    # ------------------------------------------------------------------ helpers

    def _set_matcher(self, buggy: bool) -> None:
        self.engine.buggy_match = buggy
        self.reference.buggy_match = buggy
        self.watched.buggy_match = buggy

    def _match_both(self, key):
        buggy = self.engine.buggy_match
        preview = preview_match(self.engine.snapshot(), key, buggy)
        slots, node = self.engine.match_prefix(key)
        # the pure preview a view shows must predict the real match, split included
        assert (preview.matched, preview.slots) == (len(slots), tuple(slots.tolist()))
        if preview.split is None:
            assert preview.last_node == node.id
        else:
            # the returned node is the new upper half; the node it cut keeps its id below
            assert [c.id for c in node.children.values()] == [preview.split[0]]
            assert preview.split[1] == len(node.key)
        ref_slots, ref_node = self.reference.match_prefix(key)
        assert slots.dtype == torch.int64 and slots.dim() == 1
        assert slots.tolist() == ref_slots.tolist()
        assert engine_path_keys(self.engine, node) == self.reference.path_keys(ref_node)
        watched_slots, watched_node = self.watched.match_prefix(key)
        assert watched_slots.tolist() == slots.tolist() and watched_node.id == node.id
        return slots, node, ref_node, watched_node

    def _evict_both(self, num_tokens: int) -> None:
        freed, ref_freed, watched_freed = [], [], []

        def engine_free(slots):
            freed.append(tuple(slots.tolist()))
            return self.pool.free(slots)

        def model_free(slots):
            ref_freed.append(tuple(slots.tolist()))
            return self.model.free(slots.tolist())

        def watched_free(slots):
            watched_freed.append(tuple(slots.tolist()))
            return self.watched_pool.free(slots.tolist())

        self.engine.evict(num_tokens, engine_free)
        self.reference.evict(num_tokens, model_free)
        self.watched.evict(num_tokens, watched_free)
        assert freed == ref_freed == watched_freed
        gone = {slot for group in freed for slot in group}
        self.stored = {p: s for p, s in self.stored.items() if s not in gone}
        if num_tokens > 0 and sum(map(len, freed)) < num_tokens:
            # stopping short is only allowed when nothing unreferenced is left to take
            assert self.engine.evictable_size() == 0

    def _insert_both(self, key, slots, model_slots) -> None:
        held = self.engine.insert(key, slots)
        assert held == self.reference.insert(key, list(model_slots))
        assert held == self.watched.insert(key, list(model_slots))
        self.watched_pool.free(model_slots[:held])
        assert self.pool.free(slots[:held]) == self.model.free(model_slots[:held])
        for i in range(held, len(key)):
            assert key[:i + 1] not in self.stored
            self.stored[key[:i + 1]] = model_slots[i]

    # ------------------------------------------------------------------- rules

    @initialize(buggy=st.booleans())
    def choose_matcher(self, buggy):
        self._set_matcher(buggy)

    @rule(buggy=st.booleans())
    def flip_matcher(self, buggy):
        self._set_matcher(buggy)

    @rule(key=KEYS)
    def match(self, key):
        slots = self._match_both(key)[0]
        if not self.engine.buggy_match:
            hit = slots.tolist()
            # a true prefix of the query, with the slots stored for exactly those tokens
            assert hit == [self.stored[key[:i + 1]] for i in range(len(hit))]
            # and the longest one the tree holds
            assert len(hit) == len(key) or key[:len(hit) + 1] not in self.stored

    @precondition(lambda self: self.known)
    @rule(data=st.data(), cut=st.integers(-3, 3), tail=KEYS)
    def revisit(self, data, cut, tail):
        """Match or lock a key near one inserted before: cut short, or run on past it."""
        key = data.draw(st.sampled_from(self.known))
        key = key[:len(key) + cut] if cut < 0 else key + tail[:cut]
        if data.draw(st.booleans()):
            self.lock(key)
        else:
            self.match(key)

    @rule(key=KEYS)
    def lock(self, key):
        _, node, ref_node, watched_node = self._match_both(key)
        delta = self.engine.inc_ref_counter(node)
        assert delta == self.reference.inc_ref_counter(ref_node)
        assert delta == self.watched.inc_ref_counter(watched_node)
        self.locks.append((node, ref_node, watched_node))

    @precondition(lambda self: self.locks)
    @rule(data=st.data())
    def unlock(self, data):
        node, ref_node, watched_node = self.locks.pop(data.draw(st.integers(0, len(self.locks) - 1)))
        delta = self.engine.dec_ref_counter(node)
        assert delta == self.reference.dec_ref_counter(ref_node)
        assert delta == self.watched.dec_ref_counter(watched_node)

    def _alloc_all(self, need: int):
        """The same ``need`` new slots from all three pools, evicting first when short."""
        short = need - self.pool.available_size()
        if short > 0:
            self._evict_both(short)
        before = self.pool.refcounts()
        slots, model_slots = self.pool.alloc(need), self.model.alloc(need)
        watched_slots = self.watched_pool.alloc(need)
        if model_slots is None:
            assert slots is None and self.pool.refcounts() == before and watched_slots is None
            return None, None
        assert slots.tolist() == model_slots == watched_slots
        return slots, model_slots

    @rule(key=KEYS)
    def start_request(self, key):
        """A request that computes its whole sequence itself (no prefix reused)."""
        slots, model_slots = self._alloc_all(len(key))
        if slots is not None:
            self.running.append((key, slots, model_slots, None))
            self.known.append(key)

    @precondition(lambda self: not self.engine.buggy_match)
    @rule(key=KEYS, extra=st.integers(0, 3))
    def admit_request(self, key, extra):
        """As the scheduler admits one: match, lock, share the hit slots, allocate the rest."""
        prefix, node, ref_node, watched_node = self._match_both(key)
        delta = self.engine.inc_ref_counter(node)
        assert delta == self.reference.inc_ref_counter(ref_node) == self.watched.inc_ref_counter(watched_node)
        lock = (node, ref_node, watched_node)
        key = key + "abc"[:extra]  # the tokens it generates are part of what it inserts
        new, _model_new = self._alloc_all(len(key) - len(prefix))
        if new is None:
            self._release(lock)
            return
        self.pool.add_refs(prefix)
        for model in (self.model, self.watched_pool):
            model.add_refs(prefix.tolist())
        slots = torch.cat((prefix, new))
        self.running.append((key, slots, slots.tolist(), lock))
        self.known.append(key)

    def _release(self, lock) -> None:
        node, ref_node, watched_node = lock
        delta = self.engine.dec_ref_counter(node)
        assert delta == self.reference.dec_ref_counter(ref_node) == self.watched.dec_ref_counter(watched_node)

    @precondition(lambda self: self.running)
    @rule(data=st.data())
    def finish_request(self, data):
        key, slots, model_slots, lock = self.running.pop(data.draw(st.integers(0, len(self.running) - 1)))
        self._insert_both(key, slots, model_slots)
        if lock is not None:
            self._release(lock)

    @rule(key=KEYS)
    def insert_without_slots(self, key):
        """insert(key) with no value stores the token codes (they are not pool slots)."""
        engine, reference = RadixCache(), NaiveRadixCache()
        engine.insert("abcab"), reference.insert("abcab")
        assert engine.insert(key) == reference.insert(key)
        assert engine_structure(engine.root_node) == reference.structure()

    @rule()
    def toggle_observer(self):
        if self.watched.observer is None:
            self.watched.observer = self._count
        else:
            self.watched.observer = None

    def _count(self, event):
        self.events += 1

    @rule(num_tokens=st.integers(0, 40), traced=st.booleans())
    def evict(self, num_tokens, traced):
        self.watched.observer = self._count if traced else None
        self._evict_both(num_tokens)

    # -------------------------------------------------------------- invariants

    @invariant()
    def same_tree_and_consistent(self):
        assert engine_structure(self.engine.root_node) == self.reference.structure()
        assert engine_structure(self.watched.root_node) == engine_structure(self.engine.root_node)
        assert self.watched_pool.counts == self.model.counts
        check_invariants(self.watched)
        assert self.engine.evictable_size() == self.reference.evictable_size()
        assert self.engine.total_size() == self.reference.total_size()
        assert list(self.pool.refcounts()) == self.model.counts
        held = [slots for _, slots, _, _ in self.running]
        check_invariants(self.engine, self.pool, held=held)
        assert self._cached_prefixes() == self.stored

    def _cached_prefixes(self) -> dict:
        out, stack = {}, [(self.engine.root_node, "")]
        while stack:
            node, prefix = stack.pop()
            for token, slot in zip(node.key, node.value.tolist()):
                prefix += token
                out[prefix] = slot
            stack.extend((child, prefix) for child in node.children.values())
        return out


# RADIXVIZ_STATEFUL_EXAMPLES=5000 for a deeper search than the suite's quick one
CacheAgainstReference.TestCase.settings = settings(
    max_examples=int(os.environ.get("RADIXVIZ_STATEFUL_EXAMPLES", 200)), stateful_step_count=40,
    deadline=None, suppress_health_check=[HealthCheck.too_slow])
TestCacheAgainstReference = CacheAgainstReference.TestCase
