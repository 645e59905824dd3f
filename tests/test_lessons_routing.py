"""Lessons 13 and 14 and the every-worker-hits challenge: every number their prose states,
recomputed. The commands lesson 14 tells the learner to run are run here as written, through
the command line, and the figures it quotes are read back from their --json output.
(The predictions are held to the engine and the routers by ``radixviz lessons --check``.)"""
from __future__ import annotations

import json
import re
import shlex
from statistics import mean

import pytest

from radixviz.cli import main
from radixviz.lessons import load_lessons
from radixviz.lessons.challenges.challenge import attempt, load_challenges
from radixviz.lessons.route_checks import CACHE_LIBRARY, CACHE_ONLY, placements, reused_tokens
from radixviz.sim import cluster
from radixviz.sim.router_tree import ApproxTree
from radixviz.sim.routers import LIBRARY_DEFAULTS, RouterConfig
from radixviz.sim.workloads import WORKLOADS, make_workload

LESSONS = {l.number: l for l in load_lessons()}


def text_of(number: int) -> str:
    return " ".join(LESSONS[number].path.read_text(encoding="utf-8").split())


def commands(number: int) -> list:
    text = LESSONS[number].path.read_text(encoding="utf-8")
    return re.findall(r"^\s+radixviz (simulate [^\n]+)$", text, re.MULTILINE)


def run_json(capsys, command: str, *extra) -> dict:
    with pytest.raises(SystemExit) as done:
        main(shlex.split(command) + list(extra) + ["--json"])
    assert done.value.code == 0
    return json.loads(capsys.readouterr().out)


def test_lesson_14_names_the_commands_it_quotes():
    assert commands(14) == ["simulate --workers 4 --workload multi-tenant",
                            "simulate --workers 4 --workload hot-prefix --router cache-aware"]


def test_lesson_14_multi_tenant_figures(capsys):
    doc = run_json(capsys, commands(14)[0], "--router", "round-robin,cache-aware")
    rr, ca = doc["results"]["round-robin"], doc["results"]["cache-aware"]
    text = text_of(14)
    assert doc["pool_size"] == 1024 and doc["rate"] == 2 and "pool of 1,024 slots" in text
    # the loop the figures come from: today's, with the prefill-end insert
    assert rr["settings"]["cache_unfinished"] and ca["settings"]["cache_unfinished"]
    assert "(#418's `--cache-unfinished`, always on here)" in text
    assert f"the hit rate is {rr['hit_rate']:.1%}" in text
    assert f"already has its prompt: {ca['hit_rate']:.1%}" in text
    fewer = 1 - ca["tokens_computed"] / rr["tokens_computed"]
    assert "about 40% fewer tokens computed" in text and round(fewer, 1) == 0.4
    rng_specs = make_workload("multi-tenant", 256, 0)
    prompts = {spec.input_ids[:150] for spec in rng_specs}
    assert len(prompts) == 8 and "Eight tenants" in text
    lengths = _system_lengths(rng_specs)
    assert "eight prompts of about 190 tokens" in text and abs(mean(lengths) - 190) < 10


def _system_lengths(specs) -> list:
    """Each tenant's system prompt length: the prefix all its requests share."""
    groups: dict = {}
    for spec in specs:
        groups.setdefault(spec.input_ids[:150], []).append(spec.input_ids)
    out = []
    for prompts in groups.values():
        shared = min(len(p) for p in prompts)
        for p in prompts[1:]:
            shared = min(shared, next(i for i, (a, b) in enumerate(zip(prompts[0], p)) if a != b))
        out.append(shared)
    return out


LIBRARY_FLAGS = ("--cache-threshold", "0.5", "--balance-abs-threshold", "32",
                 "--balance-rel-threshold", "1.1", "--max-tree-size", "10000")


def test_lesson_14_hot_prefix_figures(capsys):
    text = text_of(14)
    on = run_json(capsys, commands(14)[1])["results"]["cache-aware"]
    library = run_json(capsys, commands(14)[1], *LIBRARY_FLAGS)["results"]["cache-aware"]
    off = run_json(capsys, commands(14)[1], "--balance-abs-threshold", "1000000000")["results"]["cache-aware"]
    assert f"the library's defaults (`{' '.join(LIBRARY_FLAGS)}`)" in text.replace("` `", " ")
    assert "and with `--balance-abs-threshold 1000000000` (no balancing)" in text

    def busiest(run):
        return max(w["requests"] for w in run["workers"])
    assert (f"As launched, the busiest worker gets {busiest(on)} of the 256 requests "
            f"({on['balance_requests']:.2f} times the mean) and the run ends after {on['passes']} passes") in text
    assert (f"with the library's defaults it gets {library['balance_requests']:.2f} times the mean and the "
            f"run ends after {library['passes']};") in text
    assert (f"without the thresholds one worker takes {busiest(off)} ({off['balance_requests']:.2f} times "
            f"the mean) and the run needs {off['passes']} passes") in text
    assert (f"{off['hit_rate']:.1%} without the thresholds, {on['hit_rate']:.1%} as launched, "
            f"{library['hit_rate']:.1%} with the library's defaults") in text
    assert off["hit_rate"] > on["hit_rate"] > library["hit_rate"]
    assert off["passes"] > on["passes"] > library["passes"]
    # the predictions' explanations: requests moved for balance in each run
    assert f"in this run {on['reasons']['imbalanced']} of the 256 requests are moved for balance" in text
    assert f"every request goes to the least loaded worker ({library['reasons']['imbalanced']} of the 256 here)" in text
    # the lesson's check names run the same thing
    assert cluster.run_router("hot-prefix", CACHE_ONLY).passes == off["passes"]
    assert cluster.run_router("hot-prefix", cluster.CACHE_LIBRARY).passes == library["passes"]
    assert CACHE_ONLY == cluster.CACHE_ONLY and CACHE_LIBRARY == cluster.CACHE_LIBRARY
    assert "three requests in four share one system prompt" in text
    shares = [spec.input_ids[:256] for spec in make_workload("hot-prefix", 256, 0)]
    hot = max(set(shares), key=shares.count)
    assert 0.7 < shares.count(hot) / len(shares) < 0.8


def test_lesson_14_worked_example_counts():
    text = text_of(14)
    tree = ApproxTree()
    tree.insert(tuple("cats:ask1"), 0)
    found = tree.prefix_match(tuple("cats:ask2"))
    assert (found.matched, found.length) == (8, 9)
    assert f"8 of its 9 characters ({8 / 9:.0%})" in text
    tree = ApproxTree()
    tree.insert(tuple("cats:ab1"), 0)
    assert tree.prefix_match(tuple("catXYZWV")).matched == 3 and f"3 of its 8 characters: {3 / 8:.0%}" in text
    assert placements("cache-aware", 2, ["cats:ab1", "catXYZWV"]) == [0, 0]
    assert placements(CACHE_LIBRARY, 2, ["cats:ab1", "catXYZWV"]) == [0, 1]     # "it would go to worker 1"
    four = ["cats:ask1", "cats:ask2", "dogs:ask3", "cats:ask4"]
    assert placements("cache-aware", 2, four) == [0, 0, 1, 0]
    rr = placements("round-robin", 2, four)
    assert rr == [0, 1, 0, 1] and reused_tokens(four, rr) == 8
    assert "cats:ask2, which shares \"cats:ask\", 8 tokens" in text
    config = RouterConfig()
    assert (config.balance_abs_threshold, config.balance_rel_threshold, config.cache_threshold,
            config.max_tree_size) == (64, 1.5, 0.3, 2 ** 26)
    assert "more than 64 requests in flight beyond the idlest, *and* more than 1.5 times" in text
    assert "covers **more than 30%** of the prompt's characters" in text
    assert "a tree of up to 2^26 characters a worker" in text
    lib = LIBRARY_DEFAULTS
    assert (lib.cache_threshold, lib.balance_abs_threshold, lib.balance_rel_threshold, lib.max_tree_size) \
        == (0.5, 32, 1.1, 10_000)
    assert "says 0.5, 32, 1.1× and 10,000 characters" in text


def test_lesson_13_states_sglangs_hash_and_event_layout():
    text = text_of(13)
    assert "each written as 4 bytes, little-endian" in text
    assert "the first 16 hex digits, as a signed 64-bit number" in text
    assert set(WORKLOADS) >= {"multi-tenant", "hot-prefix", "multi-turn"}


def test_the_challenge_debrief_and_hints_hold():
    challenge = next(c for c in load_challenges() if c.id == "every-worker-hits")
    solved = attempt(challenge, challenge.solution)
    assert solved.solved and "3 workers reused a prefix" in " ".join(solved.debrief(challenge).split())
    arrivals = ["cats:ask1", "dogs:ask2", "eels:ask3", "dogs:ask4", "eels:ask5", "cats:ask6"]
    dealt = [f'insert "{key}" ns w{i % 3}' for i, key in enumerate(arrivals)]
    rr = attempt(challenge, "\n".join(dealt))
    assert rr.values["namespaces_hit"] == 0                 # "gives no hit at all"
    assert placements("round-robin", 3, arrivals) == [0, 1, 2, 0, 1, 2]
    assert "cats:ask1 and dogs:ask4 to w0, dogs:ask2 and eels:ask5 to w1, eels:ask3 and cats:ask6 to w2" \
        in " ".join(challenge.path.read_text(encoding="utf-8").split())


def test_the_simulator_page_router_table_is_measured(capsys):
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[1] / "docs" / "simulator.md").read_text(encoding="utf-8")
    rows = {"multi-tenant": "multi-tenant: hit rate / balance", "multi-turn": "multi-turn",
            "hot-prefix": "hot-prefix"}
    for workload, label in rows.items():
        doc = run_json(capsys, f"simulate --workers 4 --workload {workload}")
        cells = " | ".join(f"{r['hit_rate'] * 100:.1f} % / {r['balance_requests']:.2f}"
                           for r in doc["results"].values())
        assert f"| {label} | {cells} |" in readme, workload
    assert list(doc["results"]) == ["round-robin", "random", "least-load", "cache-aware", "cache-aware-events"]
    folded = " ".join(readme.split())
    on = doc["results"]["cache-aware"]
    busiest = max(w["requests"] for w in on["workers"])
    assert (f"the launched thresholds let one worker take {busiest} of the 256 requests (balance "
            f"{on['balance_requests']:.2f}, {on['passes']} passes)") in folded
    library = run_json(capsys, "simulate --workers 4 --workload hot-prefix --router cache-aware",
                       *LIBRARY_FLAGS)["results"]["cache-aware"]
    assert (f"the library's defaults hold it to {library['balance_requests']:.2f} "
            f"({library['hit_rate']:.1%}".replace("%", " %") + f", {library['passes']} passes)") in folded
    assert "0.3, 64 requests, 1.5× and a tree of 2^26 characters a worker" in folded
    assert f"pass `{' '.join(LIBRARY_FLAGS)}` for those" in folded.replace("` `", " ")
