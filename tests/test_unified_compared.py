"""Issue 54 item 5, compared: the unified engine with only the full component beside the 2026
engine (``run --compare engines --engine unified``, the app's ``C``) agrees with it operation
for operation, results and trees, except where SGLang changed behaviour between 9fbe6800a
(2026-03-20) and v0.5.23 (2026-10-30). One such change shows in what a learner can do:

- **#26549** (2026-05-30, "[UnifiedTree]: Support eviction priority"): a split's new prefix
  node keeps its child's creation time (``new_node.creation_time = child.creation_time`` in
  the unified tree's ``_split_node``), where 9fbe6800a's radix cache gave it the time of the
  split. FIFO and FILO order by creation time, so after a split they may take another leaf.

Slot numbers are not compared (by count only): the unified engine draws from SGLang's
allocator, where radixviz's 2026 engine takes the lowest free slots; SGLang's allocator did
not change here, radixviz's 2026 pool is a simpler one.
"""
from __future__ import annotations

import random

import pytest

from radixviz.engines.unified import cache_tree
from radixviz.script import Session, compare_engines, parse_script
from radixviz.tui.screens.compare import engine_columns

# a split prefix ('ab') outlives its children; which of it and 'xy' is older decides FIFO
FIFO_SPLIT = 'insert "abcd"; insert "xy"; insert "abef"; lock "xy"; evict 4; unlock "xy"; evict 2; match "abxy"'


def _ops(seed: int, count: int = 50) -> list:
    rng = random.Random(seed)
    keys = ["".join(rng.choice("abc") for _ in range(rng.randrange(1, 9))) for _ in range(10)]
    lines, locked = [], []
    for _ in range(count):
        r, key = rng.random(), rng.choice(keys)
        if r < 0.45:
            lines.append(f'insert "{key}"' + (f" priority {rng.randrange(3)}" if rng.random() < 0.2 else ""))
        elif r < 0.7:
            lines.append(f'match "{key}"')
        elif r < 0.8:
            locked.append(key)
            lines.append(f'lock "{key}"')
        elif r < 0.88 and locked:
            lines.append(f'unlock "{locked.pop(rng.randrange(len(locked)))}"')
        else:
            lines.append(f"evict {rng.randrange(1, 6)}")
    return parse_script("\n".join(lines))


@pytest.mark.parametrize("policy, page", [("lru", 1), ("lfu", 2), ("priority", 4), ("mru", 1), ("slru", 2)])
def test_with_only_full_kv_it_agrees_with_the_2026_engine(policy, page):
    for seed in range(3):
        side = compare_engines(_ops(seed), 48, "cpu", page_size=page, eviction_policy=policy, later="unified")
        assert side.configs[1].engine == "unified" and not side.same_slots
        assert side.error is None or side.count < 50
        assert side.diverged is None, (seed, side.ops[side.diverged].text)


class TestSplitKeepsTheCreationTime:
    """#26549: the one difference, and the only one, on random sequences under FIFO and FILO."""

    def test_fifo_parts_ways_after_a_split(self):
        side = compare_engines(parse_script(FIFO_SPLIT), 24, "cpu", eviction_policy="fifo", later="unified")
        assert side.diverged == 6                                     # evict 2
        today, unified = (s.records[-1].result["matched"] for s in side.sessions)
        assert (today, unified) == (2, 0)    # 2026: 'xy' was the older leaf; v0.5.23: 'ab', born with 'abcd'

    @pytest.mark.parametrize("policy", ["fifo", "filo"])
    def test_without_it_they_agree(self, monkeypatch, policy):
        split = cache_tree.UnifiedTreeCore._split_node

        def as_9fbe6800a(self, key, child, split_len):
            node = split(self, key, child, split_len)
            node.creation_time = self.tick()   # born at the split, as 9fbe6800a's radix cache does
            return node
        monkeypatch.setattr(cache_tree.UnifiedTreeCore, "_split_node", as_9fbe6800a)
        runs = [parse_script(FIFO_SPLIT)] + [_ops(seed) for seed in range(6)]
        assert [compare_engines(ops, 48, "cpu", eviction_policy=policy, later="unified").diverged
                for ops in runs] == [None] * len(runs)


def test_run_compare_engines_takes_the_unified_engine_and_its_options(cli):
    code, out, err = cli("run", "--device", "cpu", "--pool-size", "24", "--width", "160", "--engine", "unified",
                         "--eviction-policy", "fifo", "-e", FIFO_SPLIT, "--compare", "engines")
    assert (code, err) == (0, "")
    assert "They part ways at operation 7: evict 2" in out and "slots are compared by count, not number" in out
    assert "2026 engine, page 1, fifo" in out and "unified engine, full, page 1, fifo" in out
    code, out, _ = cli("run", "--device", "cpu", "--pool-size", "24", "--width", "160", "--engine", "unified",
                       "--components", "full,swa", "--window", "2", "-e", 'insert "abcd"; window 3; match "abcd"',
                       "--compare", "engines")
    assert code == 0 and "unified engine, full+swa, window 3, page 1, lru" in out
    assert "window is an option of the unified engine" in out            # the 2026 column skips it


def test_the_apps_compare_puts_the_2026_engine_beside_a_unified_session():
    session = Session(24, device="cpu", engine="unified", components=("full", "swa"), window=4)
    left, right = engine_columns(session)
    assert (left.engine, right.engine) == ("2026", "unified")
    assert dict(right.more)["components"] == ("full", "swa") and dict(right.more)["window"] == 4
