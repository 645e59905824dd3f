"""bench/core.py runs, and the variants it times agree (its timings are not checked)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path


_CORE = Path(__file__).resolve().parents[1] / "bench" / "core.py"


def load_core():
    spec = importlib.util.spec_from_file_location("bench_core", _CORE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_run_reports_identical_results(capsys):
    core = load_core()
    assert core.main(["--quick", "--requests", "40", "--repeat", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["identical"] is True
    assert set(report["results"]) == {"engine", "engine_traced", "naive", "engine_bare"}
    assert len({run["digest"] for run in report["results"].values()}) == 1
    assert report["results"]["engine_traced"]["events"] > 0
    assert report["workload"]["requests"] == 40 and report["workload"]["matched_tokens"] > 0


def test_workload_is_seeded_and_shares_prompts():
    core = load_core()
    params = dict(core.QUICK, requests=50)
    first, again = core.make_workload(1, **params), core.make_workload(1, **params)
    assert first == again and first != core.make_workload(2, **params)
    lows = params["system_len"][0]
    heads = {prompt[:lows] for prompt, _ in first}
    assert len(heads) <= params["system_prompts"] < len(first)
