"""Scheduler simulation throughput: shared-prompt requests through the first release's loop.

All requests arrive at once, so every prefill round matches every waiting request against
the tree, as the release did; tracing is off (no observer, no per-pass snapshots). Prints
one JSON document; the goal is 10,000 requests in under 10 seconds.

    .venv/bin/python bench/sim.py [--requests 10000] [--policy lpm] [--pool-size 16384]
                                  [--max-running N] [--workload shared-prompt]

Without --max-running the request table is the release's (pool / 1024 x 256 rows), so as
many requests run at once as the memory estimate admits.
"""
from __future__ import annotations

import argparse
import json
import platform
import time

from radixviz.cache.engines import engine_names, engine_spec
from radixviz.sim.scheduler import Scheduler
from radixviz.sim.workloads import make_workload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--workload", default="shared-prompt")
    parser.add_argument("--policy", default="lpm")
    parser.add_argument("--pool-size", type=int, default=16384)
    parser.add_argument("--max-running", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engine", choices=engine_names(), default="2024",
                        help="2026: today's cache in the same 2024 loop")
    parser.add_argument("--page-size", type=int, default=1)
    parser.add_argument("--eviction-policy", default="lru")
    args = parser.parse_args()

    specs = make_workload(args.workload, args.requests, args.seed)
    spec = engine_spec(args.engine)
    options = spec.pick({"page_size": args.page_size, "eviction_policy": args.eviction_policy})
    sched = Scheduler(args.pool_size, args.policy, seed=args.seed, max_running=args.max_running,
                      record=False, device="cpu", engine=args.engine, engine_options=options)
    wall, cpu = time.perf_counter(), time.process_time()
    sched.submit(specs)
    result = sched.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    stats = result.stats
    print(json.dumps({
        "benchmark": "sim",
        "workload": args.workload, "policy": args.policy, "requests": args.requests,
        "pool_size": args.pool_size, "request_rows": sched.settings["max_running"],
        "row_limit": sched.settings["row_limit"], "tracing": False,
        "engine": args.engine, "page_size": args.page_size, "eviction_policy": args.eviction_policy,
        "total_seconds": round(wall, 3), "cpu_seconds": round(cpu, 3),
        "requests_per_s": round(args.requests / wall, 1),
        "goal_seconds": 10, "goal_met": wall < 10,
        "finished": stats.finished, "hit_rate": round(stats.hit_rate, 4),
        "prefill_batches": stats.prefill_batches, "decode_steps": stats.decode_steps,
        "retracted": stats.retracted, "refused": stats.refused,
        "python": platform.python_version(),
    }, indent=2))


if __name__ == "__main__":
    main()
