"""``simulate --insert release``: the scheduler finishing requests with the release's insert (#4)."""
from __future__ import annotations

import re

import pytest

from radixviz.sim.runner import simulate


def drift(result) -> int | None:
    events = [e for e in result.events if e.kind == "drift"]
    if not events:
        return None
    return int(re.search(r"off by ([+-]\d+)", events[-1].message).group(1))


def test_each_finished_request_costs_the_counter_one_token():
    result = simulate("few-shot", "lpm", requests=12, pool_size=512, seed=3, insert="release")
    assert result.settings["insert"] == "release"
    # one slot fewer than tokens per insert: the counter gains a node's slots but loses its
    # tokens when the node goes, and nodes still there hold one token with no slot each
    assert drift(result) is not None and drift(result) < 0


def test_the_fixed_insert_reports_no_drift_and_keeps_the_numbers():
    fixed = simulate("few-shot", "lpm", requests=12, pool_size=512, seed=3)
    assert drift(fixed) is None and fixed.settings["insert"] == "fixed"


def test_the_command_prints_the_drift(capsys):
    from radixviz.cli import main
    with pytest.raises(SystemExit) as exit_info:
        main(["simulate", "--insert", "release", "--requests", "8", "--pool-size", "256"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert re.search(r"drift: evictable_size\(\) says -?\d+ but unreferenced\s+nodes hold \d+\s+tokens: "
                     r"off by -\d+", out)


def test_an_unknown_insert_mode_is_refused():
    from radixviz.sim.scheduler import Scheduler
    with pytest.raises(ValueError, match="insert must be fixed or release"):
        Scheduler(64, insert="sometimes")
