"""``simulate --sweep pool=...,page=...,host=...``: every combination, three measures, charts."""
import json
import sys

import pytest

from radixviz.sim.capacity import parse_grid, run_grid
from radixviz.sim.runner import replay
from radixviz.sim.workloads import make_workload


def test_parse_grid_groups_values_under_their_name():
    assert parse_grid("pool=512,1024,page=1,16") == {"pool": [512, 1024], "page": [1, 16]}
    for bad, message in (("pool=512,pool=1024", "given twice"), ("pool=512,size=3", "cannot be swept"),
                         ("pool=512,page=x", "not a whole number")):
        with pytest.raises(ValueError, match=message):
            parse_grid(bad)


def test_each_point_is_the_run_at_its_setting():
    specs = make_workload("few-shot", 16, 0)
    points = run_grid({"pool": [512, 1024], "page": [1, 8]}, ["lpm"], specs=specs)
    assert [p.setting for p in points] == [{"pool": 512, "page": 1}, {"pool": 512, "page": 8},
                                           {"pool": 1024, "page": 1}, {"pool": 1024, "page": 8}]
    alone = replay(specs, "lpm", 1024, engine="2026", engine_options={"page_size": 8, "eviction_policy": "lru"})
    assert points[3].stats.hit_rate == alone.stats.hit_rate
    assert points[3].p95_ttft == alone.traffic["latency"]["ttft_passes"]["p95"]


def test_the_table_and_three_charts(cli):
    code, out, _ = cli("simulate", "--workload", "few-shot", "--requests", "16",
                       "--sweep", "pool=512,1024,page=1,16", "--compare", "lpm,fcfs")
    assert code == 0
    for title in ("cache hit rate", "% of optimal", "p95 time to first token"):
        assert title in out
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) == 8 and out.count("█") > 0


def test_json_gives_every_combination(cli):
    code, out, _ = cli("simulate", "--workload", "multi-turn", "--requests", "12",
                       "--sweep", "pool=512,host=1024,2048", "--policy", "lpm", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["engine"] == "hicache" and len(doc["results"]) == 2
    assert {"hit_rate", "share_of_optimal", "p95_ttft_passes"} <= set(doc["results"][0])


def test_a_one_setting_sweep_adds_the_optimum_and_latency(cli):
    code, out, _ = cli("simulate", "--workload", "few-shot", "--requests", "16", "--sweep", "pool=512,1024")
    assert code == 0 and "% of optimal" in out and "p95 time to first token" in out


def test_without_matplotlib_the_figure_is_skipped_in_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # an import of it fails
    figure = tmp_path / "f.svg"
    code, out, _ = cli("simulate", "--workload", "few-shot", "--requests", "12",
                       "--sweep", "pool=512,page=1,4", "--policy", "lpm", "--figure", str(figure))
    assert code == 0 and "matplotlib is not installed" in out and not figure.exists()


def test_with_matplotlib_the_figure_is_saved(cli, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib: pip install radixviz[figures]")
    figure = tmp_path / "f.svg"
    code, _out, _ = cli("simulate", "--workload", "few-shot", "--requests", "12",
                        "--sweep", "pool=512,page=1,4", "--policy", "lpm", "--figure", str(figure))
    assert code == 0 and figure.read_text().find("<svg") >= 0


@pytest.mark.parametrize("argv, message", [
    (["--sweep", "pool=512,host=256"], "must be larger than the pool"),
    (["--sweep", "pool=512,page=1", "--page-size", "4", "--engine", "2026"], "drop --page-size"),
    (["--figure", "x.svg"], "add --sweep"),
    (["--sweep", "pool=512,page=1,4", "--figure", "x.pdf"], "end in .svg or .png")])
def test_bad_sweeps_are_one_line_and_exit_2(cli, argv, message):
    code, _, err = cli("simulate", *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
