"""What the lessons claim in prose, held to the engine and the simulator: the commands a
lesson tells the learner to run are run here, exactly as written, and every number the
prose states about the engine or the simulation is recomputed and compared with the text.
(Predictions are held to the engine by ``radixviz lessons --check``; challenge debriefs and
quiz explanations are in test_lessons_numbers.py.)"""
import json
import random
import re
import shlex
from types import SimpleNamespace

import pytest

from radixviz.cli import main
from radixviz.lessons import Predict, load_lessons
from radixviz.script import Session
from radixviz.sim.policies import order_queue
from radixviz.sim.runner import simulate

from sim_probes import evicted_needed_share

LESSONS = {l.number: l for l in load_lessons()}


def text_of(number: int) -> str:
    """The lesson's Markdown with line breaks folded into spaces (numbers span lines)."""
    return " ".join(LESSONS[number].path.read_text(encoding="utf-8").split())


def simulate_commands(number: int) -> list[str]:
    text = LESSONS[number].path.read_text(encoding="utf-8")
    return re.findall(r"^\s+radixviz (simulate [^\n]+)$", text, re.MULTILINE)


def run_json(command: str, capsys, *extra) -> dict:
    argv = shlex.split(command) + list(extra) + ["--json"]
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code in (0, None)
    return json.loads(capsys.readouterr().out)


def hit_rates(command: str, capsys, *extra) -> dict:
    """Run a lesson's ``radixviz simulate`` line with --json: policy -> hit rate."""
    doc = run_json(command, capsys, *extra)
    if "results" in doc:
        return {p: r["stats"]["hit_rate"] for p, r in doc["results"].items()}
    return {doc["settings"]["policy"]: doc["stats"]["hit_rate"]}


def percent(rate: float) -> str:
    return f"{rate * 100:.1f} %"


def test_every_prediction_says_why():
    for lesson in LESSONS.values():
        for p in (b for b in lesson.blocks if isinstance(b, Predict)):
            assert p.explain, f"{lesson.path}:{p.line}: a prediction without explain"


# ------------------------------------------------------------------ lesson 7

def lesson_7_queue(buggy: bool = False):
    """The lesson's two inserts and four matches: (session, A-D as queued requests)."""
    session = Session(device="cpu", buggy=buggy)
    queue = []
    for op in LESSONS[7].operations[:6]:
        record = session.apply(op)
        if op.name == "match":
            queue.append((op.key, record.result))
    live = {}
    stack = [session.cache.root_node]
    while stack:
        node = stack.pop()
        live[node.id] = node
        stack.extend(node.children.values())
    reqs = [SimpleNamespace(rid="ABCD"[i], input_ids=key, prefix_len=r["matched"],
                            last_node=live[r["last_node"]]) for i, (key, r) in enumerate(queue)]
    return session, reqs


def weights(root, reqs) -> dict:
    """The release's weight of every node: 1 + requests ending there + children's weights."""
    def weigh(node):
        return 1 + sum(r.last_node is node for r in reqs) + sum(weigh(c) for c in node.children.values())
    found, stack = {}, [root]
    while stack:
        node = stack.pop()
        found["".join(node.key)] = weigh(node)
        stack.extend(node.children.values())
    return found


def test_lesson_7_hits_weights_and_both_orders_are_the_engines():
    text = text_of(7)
    session, reqs = lesson_7_queue()
    hits = {r.rid: r.prefix_len for r in reqs}
    assert (f"A {hits['A']}, B {hits['B']} (\"You_are_kind:\"), C {hits['C']} (\"You_are_terse:\") "
            f"and D {hits['D']}") in text
    w = weights(session.cache.root_node, reqs)
    assert f'"kind:" weighs 1 + 2 (B and D) + 1 (its child "hi") = {w["kind:"]}' in text
    assert f'"terse:" weighs 1 + 1 (C) + 1 (its child "ok") = {w["terse:"]}' in text
    lpm = ", ".join(r.rid for r in order_queue("lpm", reqs, session.cache, random.Random(0)))
    weight = ", ".join(r.rid for r in order_queue("weight", reqs, session.cache, random.Random(0)))
    assert f"so lpm's order is {lpm}." in text and f"then A: {weight}." in text
    # the release's own matcher leaves the two edges whole: other weights, the same order
    session, reqs = lesson_7_queue(buggy=True)
    w = weights(session.cache.root_node, reqs)
    assert (f'on the leaf "kind:hi" (weight 1 + 2 = {w["kind:hi"]}) '
            f'and C on "terse:ok" (1 + 1 = {w["terse:ok"]})') in text
    assert ", ".join(r.rid for r in order_queue("weight", reqs, session.cache, random.Random(0))) == weight


def test_lesson_7_simulations_show_what_it_says(capsys):
    shared, multi, few, small_pool = simulate_commands(7)[:4]
    rates = hit_rates(shared, capsys)
    assert max(rates.values()) - min(rates.values()) < 0.01, "shared-prompt: within a point"
    rates = hit_rates(multi, capsys)
    assert rates["lpm"] > rates["fcfs"] + 0.2, "multi-turn: lpm far ahead of fcfs"
    seeds = [hit_rates(few.replace("--seed 0", f"--seed {s}"), capsys) for s in range(3)]
    assert any(r["lpm"] < r["random"] for r in seeds), "few-shot, large pool: lpm can lose to random"
    assert "--pool-size 1024" in small_pool and "then the same with `--pool-size 4096`" in text_of(7)
    small = hit_rates(small_pool, capsys)["lpm"]
    big = hit_rates(small_pool.replace("1024", "4096"), capsys)["lpm"]
    assert big < small, "a bigger pool gives a lower hit rate"


def test_lesson_7_eviction_figures_are_measured():
    found = re.search(r"Measured on few-shot \((\d+) requests, seed (\d+), (\d+) slots\), only ([\d.]+) % "
                      r"of the tokens lpm's runs evicted lay on a waiting request's path, against "
                      r"([\d.]+) % under fcfs", text_of(7))
    assert found, "the measured sentence is where the test looks for it"
    requests, seed, pool = (int(found.group(i)) for i in (1, 2, 3))
    lpm = evicted_needed_share("few-shot", requests, "lpm", pool, seed)
    fcfs = evicted_needed_share("few-shot", requests, "fcfs", pool, seed)
    assert (found.group(4), found.group(5)) == (f"{lpm * 100:.1f}", f"{fcfs * 100:.1f}")


def test_lesson_7_optimum_table_and_claims_are_measured():
    """The best-order table, lpm at 100 % one at a time, multi-turn at 100 % on 4,096 slots:
    each recomputed by the simulation (the optimum as sim/optimum.py counts it)."""
    raw = LESSONS[7].path.read_text(encoding="utf-8")
    text = text_of(7)
    assert "Measured with the simulation's defaults (32 requests, 1,024 slots, seed 0):" in text
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in raw.splitlines()
            if line.startswith("| ") and line.count("%") == 4]
    assert [r[0] for r in rows] == ["shared-prompt", "few-shot", "multi-turn"]

    def traffic(workload, policy, pool=1024, **options):
        result = simulate(workload, policy, 32, pool, 0, **options)
        return result.stats.hit_rate, result.traffic["optimum"]

    for workload, best, lpm_rate, lpm_share, fcfs_share in rows:
        rate, optimum = traffic(workload, "lpm")
        assert optimum["condition_holds"], workload
        assert [best, lpm_rate, lpm_share] == [percent(optimum["optimal_hit_rate"]), percent(rate),
                                              percent(optimum["share_of_optimal"])], workload
        assert fcfs_share == percent(traffic(workload, "fcfs")[1]["share_of_optimal"]), workload
        one_at_a_time = traffic(workload, "lpm", max_running=1)[1]["share_of_optimal"]
        assert percent(one_at_a_time) == "100.0 %", workload
    assert "lpm reaches 100.0 % of the best on all three workloads" in text
    assert "radixviz simulate --workload few-shot --max-running 1" in text
    big = traffic("multi-turn", "lpm", pool=4096)
    assert percent(big[1]["share_of_optimal"]) == "100.0 %"
    assert simulate("multi-turn", "lpm", 32, 4096, 0).stats.evicted_tokens == 0
    assert "with `--pool-size 4096` nothing is evicted and lpm is at 100.0 % again" in text


# ------------------------------------------------------------------ lesson 9

TABLE_ROWS = {"the release": {}, "`--delay-shared-prefix` (#2442)": {"delay_shared_prefix": True},
              "`--cache-unfinished` (#418)": {"cache_unfinished": True},
              "both": {"delay_shared_prefix": True, "cache_unfinished": True}}


def test_lesson_9_table_is_what_the_simulation_measures():
    raw = LESSONS[9].path.read_text(encoding="utf-8")
    assert "With lpm, 32 requests and seed 0:" in " ".join(raw.split())
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in raw.splitlines()
            if line.startswith("| ") and "%" in line]
    header = next(line for line in raw.splitlines() if line.startswith("| few-shot under lpm"))
    pools = [int(p) for p in re.findall(r"--pool-size (\d+)", header)]
    assert [r[0] for r in rows] == list(TABLE_ROWS) and pools == [1024, 4096]
    for label, *cells in rows:
        measured = [percent(simulate("few-shot", "lpm", 32, pool, 0, **TABLE_ROWS[label]).stats.hit_rate)
                    for pool in pools]
        assert cells == measured, label
    hold = simulate("few-shot", "lpm", 32, 4096, 0, hold_back_shared_prefix=True).stats.hit_rate
    assert f"(`--hold-back-shared-prefix`: {percent(hold)} at 4,096 slots)" in text_of(9)


def test_lesson_9_slots_and_hits_are_the_engines():
    text = text_of(9)
    session = Session(device="cpu")
    records = [session.apply(op) for op in LESSONS[9].operations]
    insert_b = next(r for r in records if r.op.name == "insert" and r.op.key[-1] == "B")
    b_slots = insert_b.result["freed_duplicates"] + insert_b.result["new_slots"]
    assert f"into slots {b_slots[0]} to {b_slots[-1]}" in text
    insert_a = next(r for r in records if r.op.name == "insert")
    a_slots = insert_a.result["new_slots"]
    assert f'"Summarize:report_A" in slots {a_slots[0]}–{a_slots[-1]}' in text
    assert f"returns {insert_b.result['prefix_len']}" in text
    queue = [r for r in records if r.op.name == "match"][2:]      # R1-R4
    hits = [r.result["matched"] for r in queue]
    assert hits[0] == hits[2] == hits[3] and f"hit {hits[0]} tokens" in text and f"R2 hits {hits[1]}" in text

    def shared(a, b):
        return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    r1, _, r3, r4 = (r.op.key for r in queue)
    assert f"R3 shares {shared(r3, r1)} tokens with R1" in text and f"R4 shares {shared(r4, r1)} with R1" in text


# ------------------------------------------------------------------ lesson 11

def test_lesson_11_policy_figures_are_measured(capsys):
    (command,) = [c for c in simulate_commands(11) if "priority-mix" in c]
    doc = run_json(command, capsys)
    stats = {p: r["stats"] for p, r in doc["results"].items()}

    def rate(policy, level=None):
        s = stats[policy]
        return percent(s["hit_rate"] if level is None else s["by_priority"][str(level)]["hit_rate"])
    text = text_of(11)
    assert f"{rate('lru')} of prompt tokens hit, {rate('lru', 1)} of the priority-1 requests' tokens" in text
    for policy in ("priority", "lfu", "slru"):
        assert (rate(policy), rate(policy, 1)) == (rate("lfu"), rate("lfu", 1))
    assert f"which count its inserts: {rate('lfu')} and {rate('lfu', 1)}" in text
    assert f"`mru` does worst ({rate('mru')})" in text
    assert min(stats, key=lambda p: stats[p]["hit_rate"]) == "mru"


def test_lesson_11_todays_loop_figures_are_measured(capsys):
    (command,) = [c for c in simulate_commands(11) if "priority-mix" in c]
    text = text_of(11)
    assert "Add `--cache-unfinished` for today's loop" in text and "That is the release's loop" in text
    doc = run_json(command, capsys, "--cache-unfinished")
    stats = {p: r["stats"] for p, r in doc["results"].items()}

    def rate(policy, level=None):
        s = stats[policy]
        return percent(s["hit_rate"] if level is None else s["by_priority"][str(level)]["hit_rate"])
    assert f"LRU gains a little ({rate('lru')}, {rate('lru', 1)} for priority 1)" in text
    release = run_json(command, capsys)["results"]["lru"]["stats"]["hit_rate"]
    assert stats["lru"]["hit_rate"] > release
    assert (f"`slru` falls behind `lfu` ({rate('slru')} against {rate('lfu')}, {rate('slru', 1)} against "
            f"{rate('lfu', 1)})") in text
    assert stats["slru"]["hit_rate"] < stats["lfu"]["hit_rate"]
    assert f"`mru` rises to {rate('mru')}, level with `lfu` and `priority`" in text
    assert rate("mru") == rate("lfu") == rate("priority")
