"""``simulate --workers N --router-events FILE,...``: the workers start holding what recorded
servers held, and a router that reads KV events learns it from the workers' own events.

The recordings are made here as ``watch --record`` writes them: a real 2026 engine with KV
events takes prompts, its events go on the wire as SGLang encodes them, one record a batch.
"""
from __future__ import annotations

import json

import pytest

from radixviz.cache import TokenToKVPool
from radixviz.cache.engines import open_engine
from radixviz.sim.workloads import make_workload
from radixviz.wire.events import EventBatch
from radixviz.wire.from_engine import wire_event
from radixviz.wire.held_prompts import recorded_servers
from radixviz.wire.messages import encode_message
from radixviz.wire.recording import Recorder, read_records

WORKLOAD, REQUESTS, SEED = "few-shot", 48, 3


def record_server(path, prompts, evict: int = 0) -> int:
    """A recording of one server that cached ``prompts`` (then evicted at least ``evict``
    tokens: whole leaves, the least recently used first); returns the tokens evicted."""
    pool = TokenToKVPool(8192)
    engine = open_engine("2026", pool, page_size=1, kv_events=True)
    with open(path, "wb") as out:
        recorder = Recorder(out)
        for seq, prompt in enumerate(prompts):
            engine.insert(list(prompt), pool.alloc(len(prompt)))
            events = [wire_event(e) for e in engine.take_events()]
            recorder.write(0, "pub", encode_message(b"kv-events", seq, EventBatch(float(seq), events)))
        evicted = engine.evict(evict) if evict else 0
        if evicted:
            events = [wire_event(e) for e in engine.take_events()]
            recorder.write(0, "pub", encode_message(b"kv-events", len(prompts), EventBatch(9.0, events)))
    return evicted


def test_a_v0523_recording_gives_back_the_same_prompts_and_leaves_namespaces_out(tmp_path):
    # v0.5.23 joins a prompt's pages into one BlockStored and a node's into one BlockRemoved;
    # a salted or adapter block is in a namespace the workload never sends, so it is left out
    import sglang_v0523_wire as v0523
    from radixviz.wire.events import batch_of
    from radixviz.wire.from_engine import wire_events
    prompts = workload_prompts()[:8]
    pool = TokenToKVPool(8192)
    engine = open_engine("2026", pool, page_size=1, kv_events=True)
    path = tmp_path / "v0523.rvkv"
    with open(path, "wb") as out:
        recorder = Recorder(out)
        for seq, prompt in enumerate(prompts):
            engine.insert(list(prompt), pool.alloc(len(prompt)))
            batch = batch_of("v0.5.23", float(seq), wire_events(engine.take_events(), "v0.5.23"), 0)
            recorder.write(0, "pub", encode_message(b"kv-events", seq, batch))
        salted = v0523.BlockStored([77], None, [1], 1, None, "GPU", cache_salt="t")
        recorder.write(0, "pub", [b"kv-events", len(prompts).to_bytes(8, "big"), v0523.payload([salted])])
    (held,) = recorded_servers(list(read_records(path.read_bytes())))
    leaves = {p for p in prompts if not any(q != p and q[:len(p)] == p for q in prompts)}
    assert set(held.paths) == leaves and held.namespaced == 1
    assert held.tokens == distinct_prefixes(prompts) and held.broken == 0


def distinct_prefixes(prompts) -> int:
    """Tokens a radix tree of ``prompts`` holds: one per distinct prefix (the oracle)."""
    return len({tuple(p[:n]) for p in prompts for n in range(1, len(p) + 1)})


def workload_prompts() -> list:
    return [tuple(spec.input_ids) for spec in make_workload(WORKLOAD, REQUESTS, SEED)]


@pytest.fixture
def two_servers(tmp_path):
    prompts = workload_prompts()
    first, second = tmp_path / "a.rvkv", tmp_path / "b.rvkv"
    record_server(first, prompts[0::2])
    record_server(second, prompts[1::2])
    return first, second, prompts


def test_a_recording_gives_back_the_prompts_its_server_held(two_servers):
    first, _, prompts = two_servers
    (held,) = recorded_servers(list(read_records(first.read_bytes())))
    leaves = {p for p in prompts[0::2] if not any(q != p and q[:len(p)] == p for q in prompts[0::2])}
    assert set(held.paths) == leaves
    assert held.tokens == distinct_prefixes(prompts[0::2]) and held.broken == 0


def test_an_eviction_in_the_recording_is_not_held_after_it(tmp_path):
    prompts = workload_prompts()[:6]
    evicted = record_server(tmp_path / "e.rvkv", prompts, evict=10)
    (held,) = recorded_servers(list(read_records((tmp_path / "e.rvkv").read_bytes())))
    assert evicted >= 10 and held.tokens == distinct_prefixes(prompts) - evicted


@pytest.fixture
def simulate(cli):
    return cli.bound("simulate", "--workload", WORKLOAD, "--requests", str(REQUESTS), "--seed", str(SEED),
                     "--workers", "2", "--pool-size", "4096", "--json")


def hit_rate(doc, router) -> float:
    return doc["results"][router]["hit_rate"]


def test_workers_start_holding_what_each_recorded_server_held(simulate, two_servers):
    first, second, prompts = two_servers
    code, out, err = simulate("--router", "cache-aware-events", "--router-events", f"{first},{second}")
    assert code == 0, err
    warm = json.loads(out)["warm_start"]["workers"]
    assert [w["held_tokens"] for w in warm] == [distinct_prefixes(prompts[0::2]),
                                                distinct_prefixes(prompts[1::2])]
    assert [w["recorded_tokens"] for w in warm] == [w["held_tokens"] for w in warm]


def test_the_events_router_finds_the_recorded_prompts_and_hits_more(simulate, two_servers):
    first, second, _ = two_servers
    _, cold, _ = simulate("--router", "cache-aware-events")
    code, warm, err = simulate("--router", "cache-aware,cache-aware-events", "--router-events", f"{first},{second}")
    assert code == 0, err
    cold_doc, warm_doc = json.loads(cold), json.loads(warm)
    assert hit_rate(warm_doc, "cache-aware-events") > hit_rate(cold_doc, "cache-aware-events")
    # the approximate tree learns only from its own routing: the recorded state is news to it
    assert (warm_doc["results"]["cache-aware-events"]["reasons"]["cache"]
            >= warm_doc["results"]["cache-aware"]["reasons"]["cache"])


def test_a_pool_too_small_for_the_recording_keeps_what_fits(cli, two_servers):
    first, second, _ = two_servers
    code, out, err = cli("simulate", "--workload", WORKLOAD, "--requests", 16, "--workers", 2, "--json",
                         "--pool-size", 600, "--router", "cache-aware-events", "--router-events", f"{first},{second}")
    assert code == 0, err
    for worker in json.loads(out)["warm_start"]["workers"]:
        assert 0 < worker["held_tokens"] <= 600 < worker["recorded_tokens"]


def test_the_report_says_where_each_worker_started(cli, two_servers):
    first, second, _ = two_servers
    code, out, _ = cli("simulate", "--workload", WORKLOAD, "--requests", 16, "--workers", 2,
                       "--router", "cache-aware-events", "--router-events", f"{first},{second}")
    assert code == 0
    assert f"warm start from {first}, {second}: worker 0 holds" in " ".join(out.split())


@pytest.mark.parametrize("argv, words", [
    (("--router-events", "{a}"), "--router-events goes with --workers N"),
    (("--workers", 1, "--router-events", "{a},{b}"), "2 recorded servers (or ranks) for 1 workers"),
    (("--workers", 2, "--router-events", "{junk}"), "not a radixviz recording"),
    (("--workers", 2, "--router-events", ","), "--router-events needs recordings"),
])
def test_bad_recordings_are_one_line_and_exit_2(cli, two_servers, tmp_path, argv, words):
    first, second, _ = two_servers
    junk = tmp_path / "junk.rvkv"
    junk.write_text("hello")
    argv = [str(a).format(a=first, b=second, junk=junk) for a in argv]
    code, out, err = cli("simulate", "--requests", 8, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and words in err
