"""Each help and message says what is true (issue 51): the engines publish can use and its
default, the formats export writes, the requests simulate ran and what its seed drives, the
share a --json field holds."""
import json


def test_publish_offers_the_engines_that_publish_and_says_its_default(cli):
    code, out, _ = cli("publish", "--help")
    assert code == 0 and "[--engine 2026|hicache|unified]" in out and "(default 2026)" in out
    assert "default 2024" not in out and "--buggy" not in out and "--events" not in out


def test_a_page_export_names_every_format_it_writes(cli):
    code, _, err = cli("export", "-e", "insert ab", "-o", "x.jpg")
    assert code == 2 and ".html" in err and ".gif" in err and ".svg" in err


def test_simulate_says_the_number_of_requests_it_chose(cli):
    code, _, err = cli("simulate", "--pool-size", "256")
    assert code == 0 and "32 requests, the default: --requests N runs another number" in err
    code, _, err = cli("simulate", "--pool-size", "256", "--requests", "8")
    assert code == 0 and "the default" not in err


def test_a_trace_run_says_its_seed_drives_the_sampler_only(cli):
    code, out, _ = cli("simulate", "--trace", "examples/trace.jsonl")
    assert code == 0 and "14 requests, 1024 slots, sampler seed 0" in out


def test_the_optimum_is_a_share_and_named_so(cli):
    code, out, _ = cli("simulate", "--trace", "examples/trace.jsonl", "--json")
    optimum = json.loads(out)["optimum"]
    assert code == 0 and "percent_of_optimal" not in optimum and 0 < optimum["share_of_optimal"] <= 1
