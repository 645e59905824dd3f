"""Tracing: which events each operation emits, the steps they name, and their snapshots."""
from __future__ import annotations

import random
import re
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
import torch

from radixviz.cache import EventKind as K, RadixCache, TokenToKVPool
from radixviz.cache.trace import HOST_TIER_KINDS, KV_EVENT_KINDS, MODERN_ONLY_KINDS
from radixviz.render.source_map import locate, markers, reporting_lines
from reference_radix import fresh_snapshot

CACHE_DIR = Path(__file__).resolve().parents[1] / "radixviz" / "cache"
WINGS_DIR = CACHE_DIR.parent / "engines"
# the files of the cache layer: the shared parts, and each wing's engine (tests/test_layers.py's roles)
ENGINE_ROLES = ("__init__", "engine", "cache", "node", "invariants", "preview", "snapshot")
CACHE_FILES = [*CACHE_DIR.rglob("*.py"),
               *(p for p in WINGS_DIR.glob("*/*.py") if p.stem in ENGINE_ROLES or p.stem.startswith("cache_"))]


def slots(start: int, stop: int) -> torch.Tensor:
    return torch.arange(start, stop, dtype=torch.int64)


def traced(cache=None):
    cache = cache or RadixCache()
    events: list = []
    cache.observer = events.append
    return cache, events


def kinds(events) -> list:
    return [e.kind for e in events]


def source(event) -> str:
    return locate(event.source, event.step).text


class TestEventsPerOperation:
    def test_insert_into_an_empty_tree(self):
        cache, events = traced()
        cache.insert("abc", slots(0, 3))
        assert kinds(events) == [K.VISIT, K.CREATE, K.EVICTABLE, K.RESULT]
        assert {e.op for e in events} == {"insert"}
        create, evictable, result = events[1:]
        assert create["length"] == 3
        assert (evictable["old"], evictable["new"], evictable["why"]) == (0, 3, "created")
        assert result["prefix_len"] == 0 and result["length"] == 3

    def test_insert_that_splits(self):
        cache, events = traced()
        cache.insert("abcd", slots(0, 4))
        events.clear()
        cache.insert("abxy", slots(4, 8))
        assert kinds(events) == [K.VISIT, K.COMPARE, K.SPLIT, K.VISIT, K.CREATE,
                                 K.EVICTABLE, K.RESULT]
        assert events[1]["common"] == 2 and events[2]["at"] == 2
        mid = cache.root_node.children["a"]
        lower = mid.children["c"]
        assert events[2].nodes == (mid.id, lower.id)
        assert events[3].nodes == (mid.id,)

    def test_match_with_whole_edges_and_a_split(self):
        cache, events = traced()
        cache.insert("ab", slots(0, 2))
        cache.insert("abcdef", slots(2, 8))
        events.clear()
        value, last = cache.match_prefix("abcdQ")
        assert kinds(events) == [K.VISIT, K.COMPARE, K.APPEND, K.VISIT, K.COMPARE, K.SPLIT,
                                 K.APPEND, K.RESULT]
        assert events[2]["slots"] == (0, 1) and events[2]["partial"] is False
        assert events[6]["slots"] == (4, 5) and events[6].nodes == (last.id,)
        assert events[-1]["matched"] == 4 and events[-1]["slots"] == tuple(value.tolist())

    def test_buggy_match_marks_the_partial_append(self):
        cache, events = traced(RadixCache(buggy_match=True))
        cache.insert("abcdef", slots(0, 6))
        events.clear()
        cache.match_prefix("abcQ")
        assert kinds(events) == [K.VISIT, K.COMPARE, K.APPEND, K.VISIT, K.RESULT]
        assert events[2]["partial"] is True and events[2]["slots"] == (0, 1, 2)

    def test_lock_and_unlock(self):
        cache, events = traced()
        cache.insert("ab", slots(0, 2))
        cache.insert("abcd", slots(0, 4))
        _, leaf = cache.match_prefix("abcd")
        events.clear()
        cache.inc_ref_counter(leaf)
        assert kinds(events) == [K.EVICTABLE, K.REF, K.EVICTABLE, K.REF, K.RESULT]
        assert (events[1]["old"], events[1]["new"]) == (0, 1)
        assert events[0]["why"] == "locked" and events[-1]["delta"] == -4
        events.clear()
        cache.dec_ref_counter(leaf)
        assert kinds(events) == [K.EVICTABLE, K.REF, K.EVICTABLE, K.REF, K.RESULT]
        assert events[0]["why"] == "unlocked" and events[-1]["delta"] == 4

    def test_evict_with_a_parent_push_and_a_skip(self):
        cache, events = traced()
        pool = TokenToKVPool(16, device="cpu")
        for text in ("abX", "abY", "zz"):
            new = pool.alloc(len(text))
            pool.free(new[:cache.insert(text, new)])
        cache.inc_ref_counter(cache.match_prefix("zz")[1])
        events.clear()
        cache.evict(100, pool.free)
        assert kinds(events) == [
            K.HEAP,
            K.POP, K.FREE, K.DELETE, K.EVICTABLE,                   # X
            K.POP, K.FREE, K.DELETE, K.EVICTABLE, K.PUSH_PARENT,    # Y, then "ab" is a leaf
            K.POP, K.FREE, K.DELETE, K.EVICTABLE,                   # "ab", older than "zz"
            K.POP, K.SKIP,                                          # "zz" is locked
            K.RESULT]
        assert events[0].nodes and events[2]["freed"] == 1
        assert events[4]["why"] == "deleted"
        assert events[-1]["evicted"] == 4 and events[-1]["target"] == 100

    def test_the_heap_step_shows_every_leaf_least_recent_first(self):
        heaps = [e for e in workload_events(seed=5) if e.kind is K.HEAP]
        assert len(heaps) > 20
        for event in heaps:
            leaves = [n for n in event.tree.root.walk() if not n.children]
            assert list(event.nodes) == [n.id for n in sorted(leaves, key=lambda n: n.last_access)]

    def test_popping_the_root_ends_eviction(self):
        cache, events = traced()
        cache.insert("ab", slots(0, 2))
        events.clear()
        cache.evict(100, len)
        assert kinds(events) == [K.HEAP, K.POP, K.FREE, K.DELETE, K.EVICTABLE, K.PUSH_PARENT,
                                 K.POP, K.RESULT]
        assert events[-2]["is_root"] is True and events[-2].nodes == (cache.root_node.id,)


class TestEventSteps:
    EXPECTED = {
        K.VISIT: "last_access_time", K.COMPARE: "match(", K.SPLIT: "new_node",
        K.APPEND: "value.append", K.CREATE: "children[", K.EVICTABLE: "_evictable",
        K.HEAP: "self._leaves", K.POP: "leaves.pop()", K.SKIP: "ref_counter > 0", K.FREE: "freed",
        K.DELETE: "del ", K.PUSH_PARENT: "leaves.note(x.parent)", K.REF: "ref_counter",
    }

    def test_every_kind_names_a_step_marked_on_the_code_that_did_it(self):
        events = workload_events(seed=3)
        # the others: test_modern_trace, test_kv_events, test_hicache_*
        assert {e.kind for e in events} == set(K) - MODERN_ONLY_KINDS - KV_EVENT_KINDS - HOST_TIER_KINDS
        for event in events:
            site = locate(event.source, event.step)
            assert event.source == "radixviz.engines.v2024.cache"
            assert site.file.endswith("v2024/cache.py") and site.line is not None, event.step
            assert site.line not in reporting_lines(site.file), (event.kind, source(event))
            if event.kind in self.EXPECTED:
                assert self.EXPECTED[event.kind] in source(event), (event.kind, source(event))

    def test_ref_lines_change_the_counter(self):
        cache, events = traced()
        cache.insert("ab", slots(0, 2))
        cache.inc_ref_counter(cache.match_prefix("ab")[1])
        ref = locate("radixviz.engines.v2024.cache", next(e for e in events if e.kind is K.REF).step)
        assert "ref_counter += 1" in ref.text and ref.function == "inc_ref_counter"

    def test_every_emitted_label_is_marked_exactly_once(self):
        file = WINGS_DIR / "v2024" / "cache.py"
        text = file.read_text(encoding="utf-8")
        emitted = set(re.findall(r"\.emit\(\"([\w.]+)\"", text))
        marked = re.findall(r"# step: ([\w.]+)", text)
        assert emitted and sorted(marked) == sorted(set(marked))
        assert set(markers(str(file))) == emitted

    def test_the_cache_reads_no_source_and_no_call_frames(self):
        banned = re.compile(r"\b(ast|inspect|linecache|sys\._getframe|__code__|f_lineno|co_filename)\b")
        assert any(p.parent.name == "hicache" and p.name == "cache_transfers.py" for p in CACHE_FILES)
        for path in CACHE_FILES:
            code = [l for l in path.read_text(encoding="utf-8").splitlines() if not l.lstrip().startswith("#")]
            hits = [l for l in code if banned.search(l.split("#")[0])]
            assert not hits, (path.name, hits)


def workload_events(seed: int, checks=None) -> list:
    """Random inserts, matches, locks, unlocks, evictions and matcher flips, traced."""
    rng = random.Random(seed)
    cache = RadixCache()
    pool = TokenToKVPool(60, device="cpu")
    events: list = []

    def observe(event):
        events.append(event)
        if checks:
            checks(cache, event)

    cache.observer = observe
    locked: list = []
    for step in range(300):
        key = "".join(rng.choice("abc") for _ in range(rng.randint(0, 8)))
        action = rng.random()
        if action < 0.35:
            short = len(key) - pool.available_size()
            if short > 0:
                cache.evict(short, pool.free)
            new = pool.alloc(len(key))
            if new is not None:
                pool.free(new[:cache.insert(key, new)])
        elif action < 0.55:
            cache.match_prefix(key)
        elif action < 0.7:
            node = cache.match_prefix(key)[1]
            cache.inc_ref_counter(node)
            locked.append(node)
        elif action < 0.85 and locked:
            cache.dec_ref_counter(locked.pop(rng.randrange(len(locked))))
        elif action < 0.95:
            cache.evict(rng.randint(1, 10), pool.free)
        else:
            cache.buggy_match = not cache.buggy_match
        if step == 150:
            cache.observer = None   # a stretch nobody watches
        if step == 200:
            cache.observer = observe
    return events


class TestSnapshots:
    def test_each_event_shows_the_tree_exactly_as_it_was(self):
        kept = []

        def compare(cache, event):
            fresh = fresh_snapshot(cache.root_node)
            assert event.tree.root == fresh
            assert event.tree.evictable_size == cache.evictable_size()
            assert event.tree.clock == cache.snapshot().clock
            assert event.tree.buggy_match == cache.buggy_match
            assert event.tree.total_size == cache.total_size()
            assert set(event.nodes) <= set(event.tree.nodes), event.kind
            kept.append((event.tree, fresh))

        events = workload_events(seed=1, checks=compare)
        assert len(events) > 1000
        # later steps never reach back into an earlier frame
        assert all(tree.root == fresh for tree, fresh in kept)

    def test_snapshot_without_an_observer_is_fresh(self):
        cache = RadixCache()
        cache.insert("abcd", slots(0, 4))
        first = cache.snapshot()
        cache.match_prefix("ab")
        second = cache.snapshot()
        assert second.root == fresh_snapshot(cache.root_node) != first.root
        assert [n.key for n in first.root.walk()] == [(), tuple("abcd")]

    def test_snapshots_stay_true_when_nothing_is_emitted(self):
        """Every mutation drops the pictures it changes: a snapshot taken between untraced
        calls, or after a traced stretch, is never stale."""
        rng = random.Random(7)
        cache, pool, locked = RadixCache(), TokenToKVPool(40, device="cpu"), []
        for step in range(400):
            key = "".join(rng.choice("abc") for _ in range(rng.randint(0, 7)))
            action = rng.random()
            if action < 0.4:
                short = len(key) - pool.available_size()
                if short > 0:
                    cache.evict(short, pool.free)
                new = pool.alloc(len(key))
                if new is not None:
                    pool.free(new[:cache.insert(key, new)])
            elif action < 0.6:
                cache.match_prefix(key)
            elif action < 0.75:
                node = cache.match_prefix(key)[1]
                cache.inc_ref_counter(node)
                locked.append(node)
            elif action < 0.85 and locked:
                cache.dec_ref_counter(locked.pop(rng.randrange(len(locked))))
            else:
                cache.evict(rng.randint(1, 6), pool.free)
            if step % 50 == 25:
                cache.observer = lambda event: None   # a traced stretch now and then
            elif step % 50 == 40:
                cache.observer = None
            assert cache.snapshot().root == fresh_snapshot(cache.root_node), step

    def test_snapshot_helpers(self):
        cache = RadixCache()
        cache.insert("abcd", slots(0, 4))
        cache.insert("abxy", slots(4, 8))
        tree = cache.snapshot()
        leaf = cache.root_node.children["a"].children["x"]
        assert tree.path_to(leaf.id) == [cache.root_node.id, leaf.parent.id, leaf.id]
        assert tree.nodes[leaf.id].value == (6, 7) and tree.total_size == 6
        assert tree.root.subtree_tokens == 6

    def test_events_and_snapshots_are_read_only(self):
        cache, events = traced()
        cache.insert("ab", slots(0, 2))
        with pytest.raises(TypeError):
            events[0].data["at"] = 5
        with pytest.raises(FrozenInstanceError):
            events[0].tree.root.ref = 3
        with pytest.raises(FrozenInstanceError):
            events[0].kind = K.REF

    def test_sequence_numbers_increase(self):
        events = workload_events(seed=2)
        seqs = [e.seq for e in events]
        assert seqs == sorted(set(seqs))
