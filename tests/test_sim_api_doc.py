"""docs/simulation-api.md: its example runs as written and its numbers are the simulation's."""
import re
from pathlib import Path

import pytest

from radixviz.sim import simulate

DOC = Path(__file__).resolve().parent.parent / "docs" / "simulation-api.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_sweep_example_prints_a_table_and_bars_of_real_hit_rates(capsys):
    namespace: dict = {}
    exec(compile(python_blocks()[0], str(DOC), "exec"), namespace)
    shown = capsys.readouterr().out
    for pool in (512, 1024, 2048, 4096):
        assert re.search(rf"│ {pool}\s+│", shown)
    assert shown.count("█") > 0
    hit_rate = namespace["hit_rate"]
    assert len(hit_rate) == 12
    # the numbers are the simulation's, the same as simulate() gives for that traffic
    for policy, pool in (("lpm", 512), ("weight", 4096)):
        expected = simulate("tree-of-thought", policy, 120, pool, seed=0).stats.hit_rate
        assert hit_rate[policy, pool] == expected
        assert f"{expected:.1%}" in shown
    # bigger pools admit bigger batches: the sweep is not flat
    assert len({round(v, 4) for v in hit_rate.values()}) > 1


def test_the_matplotlib_example_draws_when_matplotlib_is_there(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace = {"pools": [512, 1024], "policies": ["lpm"],
                 "hit_rate": {("lpm", 512): 0.5, ("lpm", 1024): 0.6}}
    exec(compile(python_blocks()[1], str(DOC), "exec"), namespace)
    assert (tmp_path / "hit-rate.png").stat().st_size > 0


def test_the_trace_format_example_loads(tmp_path):
    from radixviz.sim import load_trace

    section = DOC.read_text().split("## Your own traffic", 1)[1]
    example = re.search(r"```\n(.*?)```", section, flags=re.S).group(1)
    trace = tmp_path / "doc.jsonl"
    trace.write_text(example)
    first, second = load_trace(trace)
    assert first.max_new_tokens == 24 and bytes(first.input_ids).startswith(b"You are")
    assert second.input_ids == (9, 4, 4, 17, 23, 42)


def test_the_priority_example_prints_the_engines_numbers(capsys):
    from radixviz.sim import Scheduler, make_workload
    from radixviz.engines.v2026.sim import todays_cache

    exec(compile(python_blocks()[2], str(DOC), "exec"), {})
    shown = capsys.readouterr().out
    assert shown in DOC.read_text()   # the output printed in the doc is this run's
    specs = make_workload("priority-mix", 200, seed=0)
    for eviction in ("lru", "priority"):
        sched = Scheduler(3072, "lpm", seed=0, record=False, cache_factory=todays_cache(1, eviction))
        sched.submit(specs)
        stats = sched.run().stats
        assert f"{eviction:>8}: hit rate {stats.hit_rate:.1%}, priority 1: {stats.priority_hit_rate(1):.1%}" in shown
    lru, priority = shown.splitlines()
    assert lru.split("priority 1:")[1] != priority.split("priority 1:")[1]
