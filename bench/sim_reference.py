"""The larger agreement sweep: the simulation beside the reference loop in the release's shape.

Every workload x policy x pool x seed below runs through both loops (tests/sim_agreement.py)
and is compared pass by pass. Prints one JSON document: how many runs and passes were
compared, how many agree, and every difference found. Exit 1 if any run disagrees.

    .venv/bin/python bench/sim_reference.py [--requests 200] [--seeds 0,1,2]
                                            [--pools 512,1024,2048,4096]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from sim_agreement import compare  # noqa: E402  (lives with the tests, beside the reference)

from radixviz.sim.policies import POLICIES  # noqa: E402
from radixviz.sim.workloads import WORKLOADS  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--pools", default="512,1024,2048,4096")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    args = parser.parse_args()
    seeds = [int(x) for x in args.seeds.split(",")]
    pools = [int(x) for x in args.pools.split(",")]

    started = time.perf_counter()
    runs = agree = passes = ooms = not_comparable = 0
    differences = []
    for workload in args.workloads.split(","):
        for policy in POLICIES:
            for pool in pools:
                for seed in seeds:
                    result = compare(workload, args.requests, policy, pool, seed)
                    if result.difference.startswith("not comparable"):
                        not_comparable += 1
                        continue
                    runs += 1
                    passes += result.passes
                    ooms += result.first_oom is not None
                    if result.agrees:
                        agree += 1
                    else:
                        differences.append({"config": list(result.config),
                                            "difference": result.difference})
    print(json.dumps({
        "benchmark": "sim_reference", "requests": args.requests, "seeds": seeds,
        "pools": pools, "policies": list(POLICIES), "workloads": args.workloads.split(","),
        "runs_compared": runs, "runs_agreeing": agree, "passes_compared": passes,
        "runs_out_of_memory_on_the_same_pass": ooms,
        "runs_not_comparable": not_comparable,
        "differences": differences, "seconds": round(time.perf_counter() - started, 1),
    }, indent=2))
    return 0 if not differences else 1


if __name__ == "__main__":
    sys.exit(main())
