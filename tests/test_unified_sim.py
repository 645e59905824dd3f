"""Issue 54 item 5, simulated: ``simulate --engine unified`` runs v0.5.23's scheduler (its
default) on model shapes, with the request layer v0.5.23 keeps for hybrid models
(engines/unified/sim.py), and reports per component the hit rate its rule allows and the
tokens it cost, beside the same requests on Full KV alone.
"""
from __future__ import annotations

import json

import pytest

from radixviz.engines.unified.sim_runs import resolve_options
from radixviz.sim.request import RequestSpec
from radixviz.sim.scheduler import Scheduler
from radixviz.sim.workloads import make_workload


def _run(cli, *argv) -> dict:
    code, out, err = cli("simulate", "--engine", "unified", "--workload", "few-shot", "--requests", "40",
                         "--pool-size", "2048", "--json", *argv)
    assert (code, err) == (0, ""), err
    return json.loads(out)


class TestTheCommand:
    def test_a_sliding_window_model_loses_hits_to_its_window(self, cli):
        doc = _run(cli, "--shape", "swa-5to1")
        assert doc["scheduler_loop"] == "v0.5.23" and doc["components"] == ["full", "swa"]
        assert doc["window"] == 32 and doc["swa_pool"] == 1638          # SGLang's 0.8 of the Full pool
        shape, alone = doc["results"]["fcfs"]["stats"], doc["results"]["fcfs, full only"]["stats"]
        totals = shape["engine_totals"]
        assert totals["tokens the sliding window cost"] > 0
        assert totals["reused (every component)"] == shape["hit_tokens"] == totals["reusable under SWA's rule"]
        assert shape["hit_rate"] < alone["hit_rate"]
        assert "reusable under Mamba's rule" not in totals             # no such component

    def test_the_text_report_writes_its_counts_as_the_other_rows_do(self, cli):
        code, out, err = cli("simulate", "--engine", "unified", "--workload", "few-shot", "--requests", "40",
                             "--pool-size", "2048", "--shape", "hybrid")
        assert (code, err) == (0, "")
        doc = _run(cli, "--shape", "hybrid")
        admitted = doc["results"]["fcfs"]["stats"]["engine_totals"]["prompt tokens at admission"]
        row = next(line for line in out.splitlines() if "prompt tokens at admission" in line)
        assert admitted >= 1000 and f"{admitted:,}" in row   # 9,143, as "prompt tokens reused" writes it

    def test_a_linear_attention_model_reuses_only_where_states_were_kept(self, cli):
        doc = _run(cli, "--shape", "linear", "--mamba-chunk", "8")
        totals = doc["results"]["fcfs"]["stats"]["engine_totals"]
        assert doc["mamba_chunk"] == 8
        assert 0 < totals["reusable under Mamba's rule"] < totals["reusable by Full KV alone"]
        assert totals["tokens missing Mamba states cost"] == (totals["reusable by Full KV alone"]
                                                              - totals["reusable under Mamba's rule"])
        assert totals["checkpoints after prefill"] > 0 and totals["peak Mamba states used"] > 0

    def test_the_text_report_names_each_components_rows(self, cli):
        code, out, _ = cli("simulate", "--engine", "unified", "--shape", "hybrid", "--workload", "few-shot",
                           "--requests", "20", "--pool-size", "2048")
        assert code == 0 and "SGLang v0.5.23's unified tree, full+swa+mamba, window 32" in " ".join(out.split())
        for row in ("hit rate under SWA's rule", "hit rate under Mamba's rule", "tokens the sliding window cost",
                    "tokens missing Mamba states cost", "fcfs, full only"):
            assert row in out

    @pytest.mark.parametrize("argv, message", [
        (("--components", "full,swa"), "the swa component needs its sliding window"),
        (("--eviction-policy", "lru,lfu"), "runs one eviction policy at a time"),
        (("--workers", "2"), "--workers and --app run the release's loop"),
        (("--workers", "2", "--scheduler", "2024"), "the unified tree runs one worker"),
    ])
    def test_refusals(self, cli, argv, message):
        code, _, err = cli("simulate", "--engine", "unified", "--requests", "4", *argv)
        assert code == 2 and message in err


@pytest.mark.parametrize("shape, page", [("hybrid", 1), ("swa_5to1", 4), ("linear", 2)])
def test_every_pass_keeps_the_pools_and_the_tree_right(shape, page):
    """Every slot of every pool accounted for between passes: the tree's, the running
    requests' (their rows), the locks' Mamba copies, or free."""
    options = resolve_options({"page_size": page, "eviction_policy": "lru"}, shape, 1024)
    s = Scheduler(1024, "fcfs", engine="unified", engine_options=options, scheduler="v0.5.23",
                  cache_unfinished=True, record=False)
    s.submit(make_workload("multi-turn", 12, 0))
    passes = 0
    while s.step() is not None:
        passes += 1
        if passes % 5 == 0:
            s.check_invariants()
    s.check_invariants()
    assert s.result().stats.finished == s.stats.requests


def test_a_request_that_decodes_past_its_window_leaves_a_tombstone():
    """v0.5.23's ``_evict_swa``: while it decodes, a request gives up the SWA KV of its own
    tokens more than a window behind; its insert hands the tree an SWA tombstone for them."""
    options = resolve_options({"page_size": 1}, "swa_5to1", 256) | {"window": 4}
    s = Scheduler(256, "fcfs", engine="unified", engine_options=options, scheduler="v0.5.23",
                  cache_unfinished=True, record=False)
    s.submit(RequestSpec(tuple(range(100, 110)), 12))
    s.run()
    tree = s.engine.snapshot()
    # the prompt, checkpointed after prefill (its last part one window), keeps its SWA KV: the
    # tree's own while the request decoded; of the 11 tokens it decoded, the insert at its end
    # hands over 5 whose SWA KV it gave up (a tombstone), then 6 with theirs (the last window apart)
    (prompt,) = tree.root.children
    assert [(len(n.key), n.parts[1].tombstone) for n in prompt.walk()] == [
        (6, False), (4, False), (5, True), (2, False), (4, False)]
