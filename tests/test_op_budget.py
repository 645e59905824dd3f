"""The engines' speed guard: each cache call does no more interpreter work than
bench/op_budget.json allows (bench/op_counts.py counts lines and calls; no clock is read, so
the verdict is the same on an idle machine and a busy one)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[1] / "bench"

# each count runs the quick workload under a tracer: seconds, so not in scripts/test.sh --fast
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def op_counts():
    sys.path.insert(0, str(_BENCH))   # op_counts reads bench/workload.py
    spec = importlib.util.spec_from_file_location("bench_op_counts", _BENCH / "op_counts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def budget(op_counts) -> dict:
    return json.loads(op_counts.BUDGET_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def measured(op_counts) -> dict:
    return op_counts.measure()


def test_every_engine_stays_within_its_budget(op_counts, budget, measured):
    assert op_counts.over_budget(measured, budget) == [], \
        "an engine does more work per call: make it cheaper, or record the cost (python bench/op_counts.py --record)"


def test_every_operation_of_every_engine_was_counted(op_counts, measured):
    # the workload reaches each call the budget guards: a lock, a split, an eviction
    for engine in op_counts.ENGINES:
        ops = measured[engine]["ops"]
        assert set(ops) == {"match_prefix", "lock", "evict", "insert", "unlock"}
        assert all(op["lines"] > 0 and op["calls"] > 0 for op in ops.values())


def test_counting_twice_gives_the_same_counts(op_counts, measured):
    assert op_counts.measure(engines=("2026_page16",))["2026_page16"] == measured["2026_page16"]


# the first release's comparison, one token at a time in Python (same answers), compiled as
# if the engine's own module held it: only radixviz's own lines are counted
_RELEASE_MATCH = """
def match(edge, key, start=0, end=None):
    limit = len(key) if end is None else end
    count = 0
    while count < len(edge) and start + count < limit and edge[count] == key[start + count]:
        count += 1
    return count
"""


def test_a_comparison_written_token_by_token_is_over_budget(op_counts, budget, monkeypatch):
    import radixviz.engines.v2024.cache as engine

    namespace: dict = {}
    exec(compile(_RELEASE_MATCH, engine.__file__, "exec"), namespace)
    monkeypatch.setattr(engine, "match", namespace["match"])   # both the match and the insert compare
    problems = op_counts.over_budget(op_counts.measure(engines=("2024",)), budget)
    assert any(line.startswith("2024 insert") and " lines " in line for line in problems)
    assert any(line.startswith("2024 match_prefix") for line in problems)


def test_a_check_that_calls_python_per_child_is_over_budget(op_counts, budget, monkeypatch):
    # the release check read each child's count through a Python function, as it once did
    import radixviz.engines.v2026.cache as engine

    monkeypatch.setattr(engine, "_lock_ref", lambda node: node.lock_ref)
    problems = op_counts.over_budget(op_counts.measure(engines=("2026",)), budget)
    assert any(line.startswith("2026 unlock") and " calls " in line for line in problems)


def test_a_class_written_on_every_node_made_is_caught(op_counts, budget, monkeypatch):
    # SGLang counts its nodes on the class (TreeNode.counter += 1): no line more, but Python
    # drops the specialized reads of every node's fields after each write
    from radixviz.engines.v2026.node import TreeNode

    built = TreeNode.__init__
    monkeypatch.setattr(TreeNode, "made", 0, raising=False)

    def counted_on_the_class(self, *args, **kwargs):
        built(self, *args, **kwargs)
        TreeNode.made += 1

    monkeypatch.setattr(TreeNode, "__init__", counted_on_the_class)
    problems = op_counts.over_budget(op_counts.measure(engines=("2026",)), budget)
    assert problems == ["2026: a cache call wrote the class attribute radixviz.engines.v2026.node.TreeNode.made"]
