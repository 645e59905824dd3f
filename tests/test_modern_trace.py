"""The 2026 engine traced: the same results as untraced, a true snapshot with every event,
every step label marked in the source, and the new steps (page cut, page compare, hit count,
priority, each leaf's policy key) reported with their values."""
import random

import pytest
import torch

from radixviz.cache import ModernRadixCache
from radixviz.engines.v2026.snapshot import ModernNodeSnapshot
from radixviz.cache.trace import MODERN_ONLY_KINDS
from radixviz.render.source_map import markers, source_file


def fresh(node) -> ModernNodeSnapshot:
    """A snapshot built from the live nodes, ignoring every cached one."""
    kids = tuple(fresh(c) for c in node.children.values())
    return ModernNodeSnapshot(node.id, node.key, tuple(node.value.tolist()), node.lock_ref,
                              node.last_access_time, kids,
                              len(node.key) + sum(k.subtree_tokens for k in kids),
                              node.hit_count, node.priority, node.creation_time, node.extra_key,
                              None if node.hash_value is None else tuple(node.hash_value))


def run_ops(cache, seed: int, page: int) -> list:
    rng = random.Random(seed)
    pages = ["a" * page, "a" * (page - 1) + "b", "b" * page]
    out, locks, slot = [], [], 0
    for _ in range(120):
        key = "".join(rng.choice(pages) for _ in range(rng.randint(0, 4)))
        roll = rng.random()
        if roll < 0.4:
            out.append(cache.insert(key, torch.arange(slot, slot + len(key)), priority=rng.randint(0, 3)))
            slot += len(key)
        elif roll < 0.65:
            slots, node = cache.match_prefix(key + "a" * rng.randint(0, page - 1))
            out.append(slots.tolist())
            if rng.random() < 0.4:
                out.append(cache.inc_lock_ref(node))
                locks.append(node)
        elif roll < 0.8 and locks:
            out.append(cache.dec_lock_ref(locks.pop(rng.randrange(len(locks)))))
        else:
            gone = []
            out.append((cache.evict(rng.randint(1, 8), lambda s, gone=gone: gone.append(s.tolist())), gone))
    return out


@pytest.mark.parametrize("page, policy", [(1, "lru"), (2, "lfu"), (4, "priority"), (2, "slru")])
def test_traced_run_matches_untraced_and_every_snapshot_is_true(page, policy):
    traced = ModernRadixCache(page, policy)
    steps = []

    def observe(event):
        steps.append(event.step)
        assert event.tree.root == fresh(traced.root_node), f"stale snapshot at {event.step}"

    traced.observer = observe
    assert run_ops(traced, 7, page) == run_ops(ModernRadixCache(page, policy), 7, page)
    assert {"match.page_compare", "insert.hit", "evict.heap", "evict.pop", "split"} <= set(steps)


def test_every_emitted_step_is_marked_in_the_engine_source():
    cache = ModernRadixCache(4, "lfu")
    events = []
    cache.observer = events.append
    run_ops(cache, 3, 4)
    cache.match_prefix("aaab")                     # a partial page: the page cut step
    file = source_file(events[0].source)
    assert file is not None and file.endswith("v2026/cache.py")
    marked = markers(file)
    assert {e.step for e in events} <= set(marked)
    assert "match.page_cut" in {e.step for e in events}
    assert {e.kind for e in events} >= MODERN_ONLY_KINDS


def test_new_steps_carry_their_values():
    cache = ModernRadixCache(2, "lfu")
    events = []
    cache.observer = events.append
    cache.insert("aabb", priority=1)
    cache.insert("aacc", priority=3)               # splits "aabb": hit and priority raised
    cache.match_prefix("aacdd")                    # 5 tokens: the last one is cut
    cache.evict(2, lambda s: None)
    by_step = {}
    for e in events:
        by_step.setdefault(e.step, []).append(e)
    cut = by_step["match.page_cut"][0]
    assert cut["kept"] == 4 and cut["dropped"] == ("d",)
    compare = by_step["match.page_compare"][-1]
    assert compare["page_size"] == 2 and compare["common"] % 2 == 0
    assert [(e["old"], e["new"]) for e in by_step["insert.hit"]] == [(1, 2)]
    assert (3, 3) not in [(e["old"], e["new"]) for e in by_step["insert.priority"]]
    assert any(e["old"] == 1 and e["new"] == 3 for e in by_step["insert.priority"])
    heap = by_step["evict.heap"][0]
    assert heap["policy"] == "lfu" and [k for _, k in heap["keys"]] == sorted(k for _, k in heap["keys"])
    assert by_step["evict.pop"][0]["key"] == heap["keys"][0][1]
