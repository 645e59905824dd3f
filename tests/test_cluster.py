"""Several workers behind a router: every request placed once and finished, the workers'
caches consistent, the events router's picture equal to what the caches hold, and the
trade-off the lesson teaches (cache-aware above round-robin; the balance thresholds)."""
from __future__ import annotations

import json

import pytest

from radixviz.sim.cluster import Cluster
from radixviz.sim.routers import LIBRARY_DEFAULTS, RouterConfig
from radixviz.sim.workloads import make_workload, request_count


def run(router, workload="multi-tenant", n=96, workers=4, **options):
    cluster = Cluster(workers, router, pool_size=1024, rate=2, cache_unfinished=True, **options)
    specs = make_workload(workload, n, 0)
    cluster.submit(specs)
    return cluster, cluster.run(), request_count(specs)


@pytest.mark.parametrize("router", ["round-robin", "random", "least-load", "cache-aware", "cache-aware-events"])
def test_every_request_is_routed_once_and_finishes(router):
    cluster, result, count = run(router, "multi-turn", 48)
    assert len(result.routes) == count == sum(s.finished for s in result.stats)
    assert sorted(r.number for r in result.routes) == list(range(count))
    assert sum(w["requests"] for w in result.per_worker()) == count
    assert sum(r.follow_up for r in result.routes) == count - 12      # 12 chats of 4 turns
    for worker in cluster.workers:
        worker.check_invariants()
        assert worker.pool.used_size() == worker.engine.total_size()


def test_the_events_router_sees_exactly_what_each_worker_caches():
    cluster = Cluster(3, "cache-aware-events", pool_size=768, rate=2, cache_unfinished=True,
                      engine_options={"page_size": 4})
    specs = make_workload("multi-tenant", 60, 1)
    cluster.submit(specs)
    router, checked = cluster.router, 0
    while cluster.step() is not None:
        for spec in specs[:12]:
            believed = router.believed(tuple(spec.input_ids))
            for i, worker in enumerate(cluster.workers):
                assert believed[i] == worker.engine.preview(tuple(spec.input_ids)).matched
                checked += 1
    assert checked > 1000


def test_cache_aware_routing_hits_far_more_than_round_robin():
    _, rr, _ = run("round-robin", n=160)
    _, ca, _ = run("cache-aware", n=160)
    assert ca.hit_rate > rr.hit_rate + 0.1
    assert ca.tokens_computed < rr.tokens_computed
    assert rr.balance("requests") == 1.0


def test_the_balance_thresholds_keep_one_worker_from_taking_the_hot_prefix():
    # the library's tighter defaults (32, 1.1x) balance most; the launched ones (64, 1.5x) less
    _, balanced, _ = run("cache-aware", "hot-prefix", 160, config=LIBRARY_DEFAULTS)
    _, launched, _ = run("cache-aware", "hot-prefix", 160)
    _, cache_only, _ = run("cache-aware", "hot-prefix", 160,
                           config=RouterConfig(balance_abs_threshold=10**9))
    assert cache_only.balance("requests") > launched.balance("requests") > 2.5 > balanced.balance("requests")
    assert "imbalanced" in balanced.reasons() and "imbalanced" not in cache_only.reasons()
    assert balanced.reasons()["imbalanced"] > launched.reasons().get("imbalanced", 0)
    assert balanced.passes < launched.passes <= cache_only.passes    # the busiest worker sets the finish


def test_a_run_is_the_same_every_time():
    _, first, _ = run("random", n=40)
    _, again, _ = run("random", n=40)
    assert first.to_dict() == again.to_dict()


def test_an_events_router_needs_an_engine_with_events():
    with pytest.raises(ValueError, match="KV events"):
        Cluster(2, "cache-aware-events", engine="2024")


@pytest.fixture
def cli(cli):
    """``radixviz simulate ARGV`` in this process: (exit code, stdout, stderr)."""
    return cli.bound("simulate")


def test_simulate_workers_compares_the_routers_in_a_table_and_charts(cli):
    code, out, _ = cli("--workers", "3", "--workload", "multi-tenant", "--requests", "48")
    assert code == 0
    for name in ("round-robin", "random", "least-load", "cache-aware", "cache-aware-events"):
        assert f"  {name} " in out
    assert "cache hit rate (higher is better)" in out and "balance:" in out
    assert "3 workers × 1,024 slots" in out and "█" in out


def test_simulate_workers_json_has_every_worker(cli):
    code, out, _ = cli("--workers", "2", "--router", "cache-aware", "--requests", "30",
                       "--workload", "hot-prefix", "--json")
    doc = json.loads(out)
    result = doc["results"]["cache-aware"]
    assert code == 0 and doc["workers"] == 2 and len(result["workers"]) == 2
    assert sum(w["requests"] for w in result["workers"]) == 30
    assert result["settings"]["router_config"]["balance_rel_threshold"] == 1.5     # as SGLang launches it
    assert result["settings"]["cache_unfinished"] is True


def test_one_router_prints_each_worker(cli):
    code, out, _ = cli("--workers", "2", "--router", "least-load", "--requests", "20")
    assert code == 0 and "router least-load" in out and "peak" in out and "routed because: least-load 20" in out


@pytest.mark.parametrize("argv, message", [
    (["--rate", "3"], "--rate goes with --workers N"),
    (["--workers", "2", "--router", "fastest"], "unknown router 'fastest'"),
    (["--workers", "2", "--engine", "2024", "--router", "cache-aware-events"], "reads KV events"),
    (["--workers", "2", "--compare", "lpm,fcfs"], "drop --compare"),
    (["--workers", "0"], "must be between 1 and 64"),
    (["--workers", "2", "--cache-threshold", "2"], "between 0 and 1"),
    (["--workers", "2", "--app", "--router", "round-robin,random"], "one router"),
])
def test_bad_cluster_options_are_one_line_and_exit_2(cli, argv, message):
    code, out, err = cli(*argv)
    assert code == 2 and message in err and out == ""
    assert len(err.strip().splitlines()) == 1


def test_the_documented_cluster_example_runs_and_prints_the_simulations_numbers(capsys):
    import re
    from pathlib import Path
    doc = (Path(__file__).resolve().parent.parent / "docs" / "simulation-api.md").read_text()
    block = re.findall(r"```python\n(.*?)```", doc, flags=re.S)[-1]
    assert "Cluster(" in block
    exec(compile(block, "simulation-api.md", "exec"), {})
    shown = capsys.readouterr().out
    _, ca, _ = run("cache-aware", n=256)
    assert f"cache-aware  hit {ca.hit_rate:.1%}  balance {ca.balance():.2f}  {ca.passes} passes" in shown
