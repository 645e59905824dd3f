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
