"""bench/modern_core.py runs the 2026 engine and its reference to identical results (its
timings are not checked)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_quick_run_reports_identical_results_at_both_page_sizes(capsys):
    sys.path.insert(0, str(_BENCH))
    spec = importlib.util.spec_from_file_location("bench_modern_core", _BENCH / "modern_core.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--quick", "--requests", "40", "--repeat", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["identical"] is True
    for page in (1, 16):
        run = report[f"page_{page}"]
        assert run["identical"] and run["matched_tokens"] > 0
    # pages drop the partial tail, so the two page sizes really ran differently
    assert report["page_1"]["digest"] != report["page_16"]["digest"]


def test_the_tree_keeps_what_sglangs_shape_keeps_per_token(capsys):
    spec = importlib.util.spec_from_file_location("bench_tree_memory", _BENCH / "tree_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--sequences", "30"]) == 0
    run = json.loads(capsys.readouterr().out)["sequences_30"]
    # no node keeps its root-to-node slots: the tensors are the cached slots, once each
    assert run["engine"]["tensor_bytes"] == run["engine"]["tokens"] * 8 == run["sglang_shape"]["tensor_bytes"]
    assert run["engine_vs_sglang"]["python_bytes_per_token"] <= 1.5
