"""Benchmark the radix cache engine: tracing off, tracing on, and the naive reference.

A seeded workload of long prompts that share system prompts runs, request by request, the
way the first release's scheduler drives the cache: match the prompt, lock the matched
path, evict when the bounded KV pool is short, allocate the new slots, insert the finished
sequence and free the duplicated slots, unlock. The same workload goes through

  engine         radixviz.cache.RadixCache with no observer
  engine_traced  the same engine with an observer attached (every micro-step, snapshots)
  naive          tests/oracles/naive_radix.py: the release's shape, token-by-token, every child
  engine_bare    the engine compiled with every trace line removed: what the idle
                 ``if tr.active:`` checks cost is engine vs engine_bare
  engine_2026    ModernRadixCache against tests/oracles/naive_modern.py at page sizes 1 and 16

and must give identical results (match lengths, lock deltas, insert returns, evicted slots,
final tree size). Prints one JSON object; exits 1 when the results differ.

``cache_seconds`` is this thread's CPU time inside cache calls with the garbage collector
paused, as modern_core.py measures the 2026 engine: wall time there moved the 2024 ratio from
2.5x to 5.1x with the load alone (docs/benchmarks.md). The variants take turns, in the
opposite order each round; ``median_round_ratio`` is the median of the rounds' ratios.
``python bench/op_counts.py --check`` is the guard that needs no clock.

    python bench/core.py            # the default workload (about a minute on one core)
    python bench/core.py --quick    # a small one, a few seconds
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))   # the oracles

import torch  # noqa: E402

import modern_core  # noqa: E402
from oracles.naive_radix import NaiveRadixCache  # noqa: E402
from radixviz.cache import RadixCache, TokenToKVPool  # noqa: E402
from workload import DEFAULT, QUICK, make_workload  # noqa: E402,F401  (tests read them here)

def drive(cache, workload, pool_size: int) -> dict:
    """Run every request through ``cache`` and a real TokenToKVPool; time and record it all.

    ``cache_seconds`` counts only the time inside the cache's own calls (an eviction's
    callback, which frees the pool, excluded): the pool and the driver cost every variant
    the same, so they are reported apart, in ``seconds``.
    """
    pool = TokenToKVPool(pool_size, device="cpu")
    record: list = []
    evicted: list = []
    clock = time.thread_time  # CPU time: immune to other processes taking the core
    in_cache = 0.0
    in_callback = 0.0

    def free(slots):
        nonlocal in_callback
        start = clock()
        evicted.append(slots.tolist())
        n = pool.free(slots)
        in_callback += clock() - start
        return n

    began = time.perf_counter()
    for prompt, output in workload:
        start = clock()
        prefix, last = cache.match_prefix(prompt)
        delta = cache.inc_ref_counter(last)
        in_cache += clock() - start
        need = len(prompt) + len(output) - len(prefix)
        short = need - pool.available_size()
        if short > 0:
            start = clock()
            cache.evict(short, free)
            in_cache += clock() - start
        new = pool.alloc(need)
        if new is None:  # the first release exits here; a benchmark just skips the request
            start = clock()
            released = cache.dec_ref_counter(last)
            in_cache += clock() - start
            record.append((len(prefix), delta, None, released))
            continue
        pool.add_refs(prefix)
        slots = torch.cat((prefix, new))
        sequence = prompt + output
        start = clock()
        held = cache.insert(sequence, slots)
        in_cache += clock() - start
        pool.free(slots[:held])
        start = clock()
        released = cache.dec_ref_counter(last)
        in_cache += clock() - start
        record.append((len(prefix), delta, held, released))
    seconds = time.perf_counter() - began
    digest = hashlib.sha256(repr((record, evicted)).encode()).hexdigest()[:16]
    return dict(seconds=seconds, cache_seconds=in_cache - in_callback, record=record,
                evicted=evicted, digest=digest, total_size=cache.total_size(),
                used_slots=pool.used_size())


def _is_trace_statement(stmt) -> bool:
    """``if tr.active: tr.emit(...)``: the engine's idle trace check and the report it guards."""
    import ast

    return isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Attribute) \
        and stmt.test.attr == "active" and not stmt.orelse


def bare_engine_class():
    """RadixCache compiled from its own source with each trace statement replaced by ``pass``."""
    import ast

    import radixviz.engines.v2024.cache as module

    path = module.__file__
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for stmt in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(stmt, ast.stmt) and _is_trace_statement(stmt):
            first = lines[stmt.lineno - 1]
            lines[stmt.lineno - 1] = first[:len(first) - len(first.lstrip())] + "pass"
            for i in range(stmt.lineno, stmt.end_lineno):
                lines[i] = ""
    namespace = {"__name__": "radixviz.engines.v2024._bare", "__package__": "radixviz.engines.v2024"}
    exec(compile("\n".join(lines), f"{path} (trace lines removed)", "exec"), namespace)
    return namespace["RadixCache"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small workload (seconds)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--requests", type=int, help="override the number of requests")
    parser.add_argument("--repeat", type=int, help="runs per variant, best time kept "
                        "(default 3, 1 with --quick)")
    args = parser.parse_args(argv)
    params = dict(QUICK if args.quick else DEFAULT)
    if args.requests:
        params["requests"] = args.requests
    workload = make_workload(args.seed, **params)
    tokens = sum(len(p) + len(o) for p, o in workload)
    torch.set_num_threads(1)

    repeat = args.repeat or (1 if args.quick else 3)
    events = 0

    def count(_event):
        nonlocal events
        events += 1

    def traced_cache():
        cache = RadixCache()
        cache.observer = count
        return cache

    makers = {"engine": RadixCache, "engine_traced": traced_cache, "naive": NaiveRadixCache,
              "engine_bare": bare_engine_class()}
    keys = ("record", "evicted", "total_size", "used_slots")
    runs: dict = {}
    identical = True
    round_ratios = []
    for round_ in range(repeat):  # interleaved, so a busy moment on the machine hits all alike
        order = list(makers) if round_ % 2 == 0 else list(reversed(makers))
        this_round = {}
        for name in order:
            events = 0
            run = modern_core.paused_gc(drive, makers[name](), workload, params["pool"])
            run["events"] = events
            this_round[name] = run["cache_seconds"]
            best = runs.setdefault(name, run)
            identical &= all(run[k] == best[k] for k in keys)
            best["seconds"] = min(best["seconds"], run["seconds"])
            best["cache_seconds"] = min(best["cache_seconds"], run["cache_seconds"])
        round_ratios.append(this_round["naive"] / this_round["engine"])
    identical &= all(all(run[k] == runs["naive"][k] for k in keys) for run in runs.values())

    def rate(seconds):
        return round(tokens / seconds) if seconds > 0 else None

    results = {name: dict(seconds=round(run["seconds"], 3), tokens_per_s=rate(run["seconds"]),
                          cache_seconds=round(run["cache_seconds"], 3),
                          cache_tokens_per_s=rate(run["cache_seconds"]), digest=run["digest"])
               for name, run in runs.items()}
    results["engine_traced"]["events"] = runs["engine_traced"]["events"]
    eng, traced_run, naive = (runs[n] for n in ("engine", "engine_traced", "naive"))
    ratios = {
        "engine_vs_naive": round(naive["seconds"] / eng["seconds"], 2),
        "engine_vs_naive_cache_only": round(naive["cache_seconds"] / eng["cache_seconds"], 2),
        "median_round_ratio": round(statistics.median(round_ratios), 2),
        "traced_vs_naive": round(naive["seconds"] / traced_run["seconds"], 2),
        "tracing_slowdown": round(traced_run["seconds"] / eng["seconds"], 2),
        # the price of the idle trace checks, inside cache calls (1.0 = free)
        "idle_trace_checks_cost": round(eng["cache_seconds"] / runs["engine_bare"]["cache_seconds"], 3),
    }
    # the 2026 engine against its own reference, pages of 1 and 16 (bench/modern_core.py)
    # five rounds by default: the two take turns and the machine is shared (modern_core.py)
    engine_2026 = modern_core.run(workload, params["pool"], repeat if args.quick or args.repeat else 5)
    identical &= engine_2026["identical"]
    report = dict(
        workload=dict(params, seed=args.seed, tokens=tokens,
                      matched_tokens=sum(r[0] for r in eng["record"]),
                      skipped_requests=sum(r[2] is None for r in eng["record"]),
                      evicted_leaves=len(eng["evicted"]),
                      evicted_tokens=sum(map(len, eng["evicted"]))),
        results=results, ratios=ratios, engine_2026=engine_2026, identical=identical,
        goal_engine_3x_naive_cache_only=ratios["engine_vs_naive_cache_only"] >= 3.0,
        repeat=repeat,
        torch=torch.__version__, python=sys.version.split()[0])
    print(json.dumps(report, indent=2))
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
