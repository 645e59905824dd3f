"""The optimum beside every policy: the SGLang paper's theorem (§3), checked on the engine."""
import json
import random

import pytest
from hypothesis import given, settings, strategies as st

from radixviz.cli import main
from radixviz.sim.model_api import VOCAB_SIZE
from optimum_reference import RadixPromptTree
from radixviz.sim.optimum import PromptTree, optimum_report
from radixviz.sim.request import RequestSpec
from radixviz.sim.runner import replay

# prompt tokens above the fake model's vocabulary: a generated answer never matches a prompt
BASE = VOCAB_SIZE


def distinct_prefixes(prompts, page=1) -> int:
    """The tree's tokens, counted the slow way: every distinct whole-page prefix, plus tails."""
    seen = set()
    tails = 0
    for p in prompts:
        whole = len(p) - len(p) % page
        tails += len(p) - whole
        for end in range(page, whole + 1, page):
            seen.add(tuple(p[:end]))
    return len(seen) * page + tails


prompt = st.lists(st.integers(0, 3), min_size=0, max_size=12).map(tuple)


class TestPromptTree:
    @given(st.lists(prompt, min_size=1, max_size=20), st.sampled_from([1, 2, 3]))
    @settings(max_examples=150, deadline=None)
    def test_counts_every_distinct_prefix_once(self, prompts, page):
        tree = PromptTree(page)
        for p in prompts:
            tree.add(p)
        report = tree.report()
        assert report["tree_tokens"] == distinct_prefixes(prompts, page)
        assert report["prompt_tokens"] == sum(map(len, prompts))

    def test_a_duplicate_costs_its_last_token(self):
        tree = PromptTree()
        for p in [(1, 2, 3), (1, 2, 3), (1, 2)]:
            tree.add(p)
        report = tree.report()
        assert report["optimal_hit_rate"] == pytest.approx(1 - 3 / 8)
        assert report["duplicate_prompts"] == 1
        assert report["last_token_bound"] == pytest.approx(1 - 4 / 8)

    def test_the_note_says_when_the_pool_is_too_small(self):
        tree = PromptTree()
        tree.add((1,) * 40, output_len=10)
        assert tree.report(pool_size=64)["condition_holds"]
        report = tree.report(pool_size=32)
        assert not report["condition_holds"] and "condition fails" in report["note"]


def random_batch(seed: int):
    """A few shared stems, cut and extended; a unique last token keeps prompts distinct
    and none a prefix of another (the last-token rule then never applies)."""
    rng = random.Random(seed)
    stems = [tuple(BASE + rng.randrange(4) for _ in range(rng.randrange(1, 14))) for _ in range(3)]
    specs = []
    for i in range(rng.randrange(2, 16)):
        stem = rng.choice(stems)[:rng.randrange(0, 14)]
        tail = tuple(BASE + rng.randrange(4) for _ in range(rng.randrange(0, 6)))
        specs.append(RequestSpec(stem + tail + (BASE + 100 + i,), rng.randrange(1, 5)))
    return specs


class TestTheoremOnTheEngine:
    @pytest.mark.parametrize("seed", range(40))
    def test_one_at_a_time_in_dfs_order_reaches_the_optimum(self, seed):
        specs = random_batch(seed)
        longest = max(len(s.input_ids) + s.max_new_tokens for s in specs)
        # the smallest pool the loop runs the longest request in (it refuses total >= pool)
        result = replay(specs, "weight", pool_size=longest + 1, seed=seed, max_running=1)
        optimum = result.traffic["optimum"]
        assert optimum["condition_holds"] and result.stats.finished == len(specs)
        assert result.stats.hit_tokens == optimum["prompt_tokens"] - optimum["tree_tokens"]
        if optimum["optimal_hit_rate"] > 0:   # nothing shared: no share of 0 to give
            assert optimum["share_of_optimal"] == pytest.approx(1.0)
        else:
            assert optimum["share_of_optimal"] is None

    def test_first_come_first_served_falls_short_on_some_batches(self):
        """The theorem's order matters: the same tight pool under fcfs loses prefixes."""
        short = 0
        for seed in range(40):
            specs = random_batch(seed)
            longest = max(len(s.input_ids) + s.max_new_tokens for s in specs)
            result = replay(specs, "fcfs", pool_size=longest + 1, seed=seed, max_running=1)
            optimum = result.traffic["optimum"]
            short += result.stats.hit_tokens < optimum["prompt_tokens"] - optimum["tree_tokens"]
        assert short > 0


class TestShownEverywhere:
    def run(self, capsys, *argv):
        with pytest.raises(SystemExit) as exc:
            main(["simulate", *argv])
        return exc.value.code, capsys.readouterr().out

    def test_compare_table_has_the_optimum_and_each_share(self, capsys):
        code, out = self.run(capsys, "--workload", "few-shot", "--requests", "16",
                             "--compare", "lpm,fcfs")
        assert code == 0
        row = next(line for line in out.splitlines() if "% of optimal" in line)
        assert len([c for c in row.split("│") if "%" in c and "optimal" not in c]) == 2
        assert "radix tree" in out and "holds the longest request" in out

    def test_json_gives_the_optimum_and_the_share(self, capsys):
        code, out = self.run(capsys, "--workload", "few-shot", "--requests", "16", "--json")
        doc = json.loads(out)
        optimum = doc["optimum"]
        assert code == 0 and 0 < optimum["optimal_hit_rate"] < 1
        assert optimum["share_of_optimal"] == pytest.approx(
            doc["stats"]["hit_rate"] / optimum["optimal_hit_rate"], abs=1e-5)


def test_tokens_that_are_not_int64_ids_fall_back_to_tuples():
    tree = PromptTree()
    tree.add((1, 2, 3))
    tree.add(("a", "b"))          # one-character tokens, as a text model may hand them
    tree.add((1, 2, 4))
    tree.add((2**70, 1))          # beyond int64
    assert tree.report()["tree_tokens"] == distinct_prefixes([(1, 2, 3), ("a", "b"), (1, 2, 4), (2**70, 1)])


class TestCountingTablesMatchTheTree:
    """The optimum now counts 64-bit prefix keys instead of building the tree: on random
    batches (prompts, chat follow-ups quoting earlier answers, duplicates, every page size)
    its numbers equal the radix tree's exactly. A collision could break this with
    probability about N**2 / 2**65 (N distinct prefixes: a few thousand here)."""

    @pytest.mark.parametrize("seed", range(30))
    def test_same_counts_as_the_radix_tree(self, seed):
        rng = random.Random(seed)
        page = rng.choice([1, 1, 2, 3, 4, 16])
        old, new = RadixPromptTree(page), PromptTree(page)
        stems = [[rng.randrange(6) for _ in range(rng.randrange(0, 40))] for _ in range(4)]
        history: list = []
        for _ in range(rng.randrange(20, 120)):
            roll = rng.random()
            if history and roll < 0.2:
                prompt = list(rng.choice(history))                     # an exact duplicate
            elif history and roll < 0.4:
                prompt = list(rng.choice(history))[:rng.randrange(0, 50)]
            else:
                prompt = rng.choice(stems)[:rng.randrange(0, 40)] + [
                    rng.randrange(6) for _ in range(rng.randrange(0, 12))]
            output = rng.randrange(0, 9)
            assert new.add(prompt, output) == old.add(prompt, output)
            history.append(prompt)
            if rng.random() < 0.5:   # its answer, decoded: a later turn may quote it
                answer = prompt + [rng.randrange(6) for _ in range(output)]
                new.add_decoded(answer)
                old.add_decoded(answer)
                history.append(answer)
        for field in ("tree_tokens", "tail_tokens", "prompt_tokens", "requests", "duplicates", "longest"):
            assert getattr(new, field) == getattr(old, field), field
        assert optimum_report(new, 64) == optimum_report(old, 64)

    def test_memory_is_the_tables_not_the_requests(self):
        """2,000 copies of one prompt add nothing: the tables grow with distinct prefixes."""
        tree = PromptTree()
        for _ in range(2_000):
            tree.add(list(range(500)))
        assert tree.tree_tokens == 500 and tree.duplicates == 1_999
        assert tree.nbytes() == 2 * 8 * 4096     # 500 keys + 1 end: both tables at their first size


def test_with_arrival_times_the_optimum_is_a_bound_not_a_promise(tmp_path):
    # the theorem orders a batch known in advance; requests that arrive over time cannot be
    # taken depth first, so the note says the optimum bounds the hit rate (docs/simulation-api.md)
    from radixviz.sim.traces import open_trace
    rows = [{"timestamp": 10_000 * i, "input_length": 64, "output_length": 2, "hash_ids": [1, 2, 3, 4 + i]}
            for i in range(4)]
    path = tmp_path / "timed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    timed = replay(open_trace(path, block_size=16), "lpm", 1024).traffic["optimum"]
    assert "bounds the hit rate" in timed["note"] and "reaches this" not in timed["note"]
    at_once = replay([RequestSpec((BASE + 1,) * 8 + (BASE + i,), 2) for i in range(4)], "lpm", 256)
    assert "reaches this" in at_once.traffic["optimum"]["note"]
