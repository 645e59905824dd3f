"""``radixviz simulate``: the numbers, the comparison, and one-line errors for bad input."""
import json

import pytest



def test_json_reports_the_totals(cli):
    code, out, _ = cli("simulate", "--workload", "few-shot", "--requests", "20",
                       "--pool-size", "768", "--json")
    doc = json.loads(out)
    stats = doc["stats"]
    assert code == 0
    assert doc["settings"]["policy"] == "lpm" and doc["settings"]["workload"] == "few-shot"
    assert stats["finished"] == 20 and 0 < stats["hit_rate"] < 1
    assert stats["tokens_reused"] == stats["hit_tokens"]
    assert stats["batches"] == stats["prefill_batches"] + stats["decode_steps"]
    assert stats["peak_pool_used"] <= 768


def test_compare_runs_every_policy_on_the_same_requests(cli):
    code, out, _ = cli("simulate", "--workload", "few-shot", "--requests", "30", "--pool-size",
                       "768", "--compare", "lpm,fcfs,random,weight", "--json")
    results = json.loads(out)["results"]
    assert code == 0 and list(results) == ["lpm", "fcfs", "random", "weight"]
    # same requests: same prompt tokens in total, split differently between reused and computed
    totals = {r["stats"]["hit_tokens"] + r["stats"]["prefill_computed"] for r in results.values()}
    assert len(totals) == 1


def test_compare_prints_a_table_and_bar_chart(cli):
    code, out, _ = cli("simulate", "--workload", "few-shot", "--requests", "20",
                       "--pool-size", "768", "--compare", "lpm,fcfs")
    assert code == 0
    assert "cache hit rate" in out and "lpm" in out and "fcfs" in out and "█" in out


def test_single_run_prints_the_measures(cli):
    code, out, _ = cli("simulate", "--workload", "no-sharing", "--requests", "8")
    assert code == 0
    for label in ("cache hit rate", "tokens evicted", "peak pool use", "retracted"):
        assert label in out


@pytest.mark.parametrize("argv, message", [
    (["--workload", "chat"], "unknown workload 'chat'"),
    (["--policy", "sjf"], "unknown policy 'sjf'"),
    (["--compare", "lpm,sjf"], "unknown policy 'sjf'"),
    (["--requests", "ten"], "argument --requests: must be a whole number"),
    (["--requests", "0"], "argument --requests: must be between 1"),
    (["--pool-size", "8"], "argument --pool-size: must be between 16"),
    (["--seed", "-1"], "argument --seed: must be between 0"),
    (["--model", "gpt"], "unknown model 'gpt'"),
    (["--policy", "fcfs", "--compare", "lpm,weight"], "give --policy or --compare, not both"),
    (["--compare", ","], "--compare needs policy names"),
])
def test_bad_input_is_one_line_exit_2(cli, argv, message):
    code, out, err = cli("simulate", *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_simulate_and_the_app_scheduler_start_from_the_same_settings():
    from radixviz.cli import build_parser
    from radixviz.tui.widgets.scheduler_form import SimSettings, check_settings

    args = build_parser().parse_args(["simulate", "--app"])
    from_cli, error = check_settings(args.workload, args.policy or "lpm", args.seed,
                                     args.requests, args.pool_size)
    assert error is None and from_cli == SimSettings()   # w on the home screen starts here
