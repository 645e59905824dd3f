"""A synthetic Mooncake-style trace streamed through the scheduler: requests per second, and
memory that stays with the live window however long the trace.

The trace (radixviz.sim.traces.synthetic: four long system prompts, multi-turn sessions,
Poisson arrivals at 25 requests a second) is written to a temporary file, then replayed by
``replay(open_trace(...))`` as ``simulate --trace FILE --block-size 16`` does, with arrival
times driving the queue (``--pass-ms``) and generated tokens forgotten as requests finish.
Resident memory is read at 10, 25, 50, 75 and 100 % of the requests: a bounded stream has
about the same at each. ``--no-optimum`` leaves out the optimum's counting tables (one 64-bit
key per distinct prefix token, sim/prefix_count.py), which grow with the trace's distinct
content (reported as ``tree_tokens``), not with its requests.

    python bench/trace_stream.py [--requests 1000000] [--policy lpm] [--pool-size 16384] [--no-optimum]

Prints one JSON document.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time

from radixviz.sim.runner import replay
from radixviz.sim.traces import open_trace
from radixviz.sim.traces.synthetic import mooncake


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--policy", default="lpm")
    parser.add_argument("--pool-size", type=int, default=16384)
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--pass-ms", type=float, default=25.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-optimum", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mooncake.jsonl")
        wall = time.perf_counter()
        with open(path, "w") as out:
            for obj in mooncake(args.requests, args.seed, args.block_size):
                out.write(json.dumps(obj, separators=(",", ":")) + "\n")
        written = time.perf_counter() - wall
        file_mb = os.path.getsize(path) / 2**20
        # a pass may finish several requests: each checkpoint is read at the first pass past it
        checkpoints = [(round(args.requests * f), f"{round(f * 100)}%") for f in (0.1, 0.25, 0.5, 0.75, 1.0)]
        rss: dict = {}

        def progress(finished: int, total: int) -> None:
            while checkpoints and finished >= checkpoints[0][0]:
                rss[checkpoints.pop(0)[1]] = round(rss_mb(), 1)

        baseline = rss_mb()
        trace = open_trace(path, block_size=args.block_size, ms_per_pass=args.pass_ms)
        wall, cpu = time.perf_counter(), time.process_time()
        result = replay(trace, args.policy, args.pool_size, args.seed, workload="synthetic mooncake",
                        progress=progress, keep_outputs=False, optimum=not args.no_optimum)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    stats, traffic = result.stats, result.traffic
    optimum = traffic.get("optimum") or {}
    print(json.dumps({
        "benchmark": "trace_stream", "requests": args.requests, "policy": args.policy,
        "pool_size": args.pool_size, "block_size": args.block_size, "pass_ms": args.pass_ms,
        "optimum": not args.no_optimum, "file_mb": round(file_mb, 1), "write_seconds": round(written, 2),
        "total_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
        "requests_per_s": round(stats.finished / wall, 1),
        "baseline_rss_mb": round(baseline, 1), "rss_mb_at": rss,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "finished": stats.finished, "refused": stats.refused, "retracted": stats.retracted,
        "hit_rate": round(stats.hit_rate, 4),
        "optimal_hit_rate": optimum.get("optimal_hit_rate"), "share_of_optimal": optimum.get("share_of_optimal"),
        "tree_tokens": optimum.get("tree_tokens"),
        "ttft_passes": traffic["latency"]["ttft_passes"], "missed": traffic["latency"]["missed"],
        "python": platform.python_version(), "load_1min": round(os.getloadavg()[0], 2),
    }, indent=2))


if __name__ == "__main__":
    main()
