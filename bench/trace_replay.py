"""A seeded Mooncake-style trace replayed by radixviz and by kvlint's token-level SGLang radix
simulator, in one run: requests per CPU second for each, and the hit rates.

The trace (radixviz.sim.traces.synthetic, 512 tokens a hash id, 1-token outputs so that the
cache holds prompts only, as kvlint's does) is written to a temporary file. Each simulator
reads that file itself and is timed from the first line read to the last request, imports
left out: kvlint (``pip install radixviz[bench]``, PyPI's kvlint 0.1.1) feeds each prompt,
expanded to token ids, to ``SGLangRadixSimulator(kv_budget_tokens=POOL)``; radixviz replays it
as ``simulate --trace`` does, one request at a time in trace order (fcfs, one running
request), on a pool of POOL slots, with ``--alloc-evict`` need (the 2024 release) and
shortfall (need minus free, what kvlint's evict-down-to-budget amounts to), its prompts
compared block by block (``--block-units``, the default). The trace's times put two
requests in one scheduler pass now and then, and the release's loop matches every waiting
request each pass, which refreshes its path before the other's eviction; the serial run
submits each request when the one before has finished, kvlint's order, and hits what kvlint
hits, to the token. Up to 20,000 requests (or with
``--token-path``) the need run is repeated token by token, the path the block units must
agree with to the token. ``--cli`` also runs ``radixviz simulate --trace`` as a child and
counts all of its CPU, start-up included, and its peak memory.

    python bench/trace_replay.py [--requests 10000] [--pool-size 131072] [--optimum] [--cli]
                                 [--token-path] [--no-kvlint]

Prints one JSON document.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")   # as the command line does (cli.one_torch_thread)

from radixviz.sim.runner import replay  # noqa: E402
from radixviz.sim.scheduler import Scheduler  # noqa: E402
from radixviz.sim.traces import open_trace  # noqa: E402
from radixviz.sim.traces.synthetic import mooncake  # noqa: E402

BLOCK = 512


def write_trace(path: str, requests: int, seed: int) -> None:
    with open(path, "w") as out:
        for obj in mooncake(requests, seed, BLOCK):
            out.write(json.dumps(dict(obj, output_length=1), separators=(",", ":")) + "\n")


def run_kvlint(path: str, pool: int) -> dict:
    try:
        from kvlint.sim.sglang_radix import SGLangRadixSimulator
    except ImportError:
        return {"skipped": "kvlint is not installed: pip install 'radixviz[bench]'"}
    cpu = time.process_time()
    sim = SGLangRadixSimulator(pool, 1)
    prompt = cached = n = 0
    with open(path) as handle:
        for line in handle:
            obj = json.loads(line)
            tokens = [b * BLOCK + i for b in obj["hash_ids"] for i in range(BLOCK)][:obj["input_length"]]
            result = sim.feed_tokens(str(n), tokens)
            prompt, cached, n = prompt + result.prompt_tokens, cached + result.cached_tokens, n + 1
    cpu = time.process_time() - cpu
    return {"simulator": "kvlint 0.1.1 SGLangRadixSimulator (token level, LRU over leaves)",
            "cpu_seconds": round(cpu, 2), "requests_per_cpu_second": round(n / cpu),
            "hit_rate": round(cached / prompt, 6), "hit_tokens": cached, "prompt_tokens": prompt}


def run_radixviz(path: str, pool: int, alloc_evict: str, optimum: bool, blocks: bool = True) -> dict:
    cpu = time.process_time()
    trace = open_trace(path, "mooncake", block_size=BLOCK)
    result = replay(trace, "fcfs", pool, 0, max_running=1, context_len=pool, keep_outputs=False,
                    optimum=optimum, alloc_evict=alloc_evict, block_units=blocks)
    cpu = time.process_time() - cpu
    stats = result.stats
    keyed = result.settings["trace"]["keyed_by"]
    out = {"simulator": f"radixviz simulate --trace (engine 2024, fcfs, one running, alloc-evict {alloc_evict}, "
                        f"keyed by {keyed})",
           "cpu_seconds": round(cpu, 2), "requests_per_cpu_second": round(stats.finished / cpu),
           "hit_rate": round(stats.hit_rate, 6), "hit_tokens": stats.hit_tokens,
           "evicted_tokens": stats.evicted_tokens}
    if optimum:
        out["optimal_hit_rate"] = result.traffic["optimum"]["optimal_hit_rate"]
    return out


def run_serial(path: str, pool: int) -> dict:
    """Each request submitted when the one before has finished, as kvlint feeds them: no
    request waits beside another, so none is matched (its path refreshed) ahead of its turn."""
    cpu = time.process_time()
    trace = open_trace(path, "mooncake", block_size=BLOCK)
    sched = Scheduler(pool, "fcfs", seed=0, record=False, max_running=1, context_len=pool,
                      alloc_evict="shortfall", block_units=True)
    for _, spec in trace.arrivals(trace.block_units()):
        sched.submit(spec)
        while sched.step() is not None:
            pass
    cpu = time.process_time() - cpu
    stats = sched.stats
    return {"simulator": "radixviz Scheduler, one request at a time (alloc-evict shortfall, keyed by blocks)",
            "cpu_seconds": round(cpu, 2), "requests_per_cpu_second": round(stats.finished / cpu),
            "hit_rate": round(stats.hit_rate, 6), "hit_tokens": stats.hit_tokens}


def run_cli(path: str, pool: int) -> dict:
    argv = [sys.executable, "-m", "radixviz", "simulate", "--trace", path, "--block-size", str(BLOCK),
            "--policy", "fcfs", "--max-running", "1", "--pool-size", str(pool), "--context-len", str(pool),
            "--alloc-evict", "shortfall", "--json"]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    report = json.loads(out)
    cpu = usage.ru_utime + usage.ru_stime
    return {"command": " ".join(["radixviz", *argv[3:]]), "exit": os.waitstatus_to_exitcode(status),
            "cpu_seconds_with_start_up": round(cpu, 2),
            "requests_per_cpu_second_with_start_up": round(report["stats"]["finished"] / cpu),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "hit_rate": report["stats"]["hit_rate"],
            "keyed_by": report["settings"]["trace"]["keyed_by"]}


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "?"
    except OSError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--pool-size", type=int, default=131_072)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--optimum", action="store_true", help="count radixviz's optimum too")
    parser.add_argument("--cli", action="store_true", help="also time the whole radixviz command")
    parser.add_argument("--no-kvlint", action="store_true")
    parser.add_argument("--token-path", action="store_true",
                        help="also replay token by token past 20,000 requests (slow)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mooncake.jsonl")
        write_trace(path, args.requests, args.seed)
        runs = {"kvlint": {"skipped": "--no-kvlint"} if args.no_kvlint else run_kvlint(path, args.pool_size),
                "radixviz_need": run_radixviz(path, args.pool_size, "need", args.optimum),
                "radixviz_shortfall": run_radixviz(path, args.pool_size, "shortfall", args.optimum)}
        runs["radixviz_serial"] = run_serial(path, args.pool_size)
        if args.token_path or args.requests <= 20_000:
            runs["radixviz_need_tokens"] = run_radixviz(path, args.pool_size, "need", args.optimum, blocks=False)
        if args.cli:
            runs["radixviz_command"] = run_cli(path, args.pool_size)
    kv = runs["kvlint"]
    ratios = {}
    if "radixviz_need_tokens" in runs:
        tokens, blocks = runs["radixviz_need_tokens"], runs["radixviz_need"]
        ratios["blocks_vs_tokens"] = {"cpu": round(blocks["cpu_seconds"] / tokens["cpu_seconds"], 3),
                                      "same_hit_tokens": blocks["hit_tokens"] == tokens["hit_tokens"]}
    if "cpu_seconds" in kv:
        for name in ("radixviz_need", "radixviz_shortfall", "radixviz_serial"):
            run = runs[name]
            ratios[name] = {"cpu_vs_kvlint": round(run["cpu_seconds"] / kv["cpu_seconds"], 3),
                            "hit_rate_minus_kvlint_points": round(100 * (run["hit_rate"] - kv["hit_rate"]), 4),
                            "hit_tokens_minus_kvlint": run["hit_tokens"] - kv["hit_tokens"]}
    print(json.dumps({
        "benchmark": "trace_replay", "requests": args.requests, "pool_size": args.pool_size,
        "block_size": BLOCK, "output_length": 1, "seed": args.seed, "runs": runs, "ratios": ratios,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "commit": commit(), "python": platform.python_version(),
        "load_1min_before": round(load, 2), "load_1min_after": round(os.getloadavg()[0], 2),
    }, indent=2))


if __name__ == "__main__":
    main()
