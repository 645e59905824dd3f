"""What the lessons claim in prose, held to the engine and the simulator: the commands a
lesson tells the learner to run are run here, exactly as written, and must show what the
lesson says they show."""
import json
import re
import shlex

import pytest

from radixviz.cli import main
from radixviz.lessons import Predict, load_lessons

LESSONS = {l.number: l for l in load_lessons()}


def simulate_commands(number: int) -> list[str]:
    text = LESSONS[number].path.read_text(encoding="utf-8")
    return re.findall(r"^\s+radixviz (simulate [^\n]+)$", text, re.MULTILINE)


def hit_rates(command: str, capsys, *extra) -> dict:
    """Run a lesson's ``radixviz simulate`` line with --json: policy -> hit rate."""
    argv = shlex.split(command) + list(extra) + ["--json"]
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code in (0, None)
    doc = json.loads(capsys.readouterr().out)
    if "results" in doc:
        return {p: r["stats"]["hit_rate"] for p, r in doc["results"].items()}
    return {doc["settings"]["policy"]: doc["stats"]["hit_rate"]}


def test_every_prediction_says_why():
    for lesson in LESSONS.values():
        for p in (b for b in lesson.blocks if isinstance(b, Predict)):
            assert p.explain, f"{lesson.path}:{p.line}: a prediction without explain"


def test_lesson_7_weights_follow_its_own_formula():
    """1 for the node, 1 per request whose match ended there, plus its children's weights."""
    from radixviz.script import Session
    session = Session(device="cpu")
    ended = []
    for op in LESSONS[7].operations[:5]:     # two inserts, then the three waiting requests' matches
        record = session.apply(op)
        if op.name == "match":
            ended.append(record.result["last_node"])
    tree = session.cache.snapshot()

    def weight(node_id):
        node = tree.nodes[node_id]
        return 1 + ended.count(node_id) + sum(weight(c if isinstance(c, int) else c.id) for c in node.children)

    by_edge = {"".join(n.key): n.id for n in tree.root.walk() if n.key}
    assert (weight(by_edge["You_are_"]), weight(by_edge["kind:"]), weight(by_edge["terse:"])) == (7, 3, 3)
    text = LESSONS[7].path.read_text(encoding="utf-8")
    assert '"You_are_" weighs 1 + 3 + 3 = 7' in text and '"kind:" weighs 1 + 1 (B) + 1' in text


def test_lesson_7_simulations_show_what_it_says(capsys):
    shared, multi, few, small_pool = simulate_commands(7)[:4]
    rates = hit_rates(shared, capsys)
    assert max(rates.values()) - min(rates.values()) < 0.01, "shared-prompt: within a point"
    rates = hit_rates(multi, capsys)
    assert rates["lpm"] > rates["fcfs"] + 0.2, "multi-turn: lpm far ahead of fcfs"
    seeds = [hit_rates(few.replace("--seed 0", f"--seed {s}"), capsys) for s in range(3)]
    assert any(r["lpm"] < r["random"] for r in seeds), "few-shot, large pool: lpm can lose to random"
    assert "--pool-size 1024" in small_pool
    small = hit_rates(small_pool, capsys)["lpm"]
    big = hit_rates(small_pool.replace("1024", "4096"), capsys)["lpm"]
    delayed = hit_rates(small_pool.replace("1024", "4096"), capsys, "--delay-shared-prefix")["lpm"]
    assert big < small, "a bigger pool gives a lower hit rate"
    assert delayed > big, "#2442's delay scheduling wins it back"
