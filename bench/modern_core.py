"""The 2026 engine on bench/core.py's workload: radixviz.cache.ModernRadixCache against the
straightforward reference of the same algorithm (tests/oracles/naive_modern.py), at page sizes 1 and 16.

Each request runs the way today's scheduler drives the cache: match the prompt (cut to whole
pages), lock the matched path, evict when the pool is short, allocate, insert the finished
sequence cut to whole pages, free the duplicated slots and the partial tail page, unlock.
Both caches must give identical results (match lengths, lock deltas, insert returns, evicted
slots in order, final sizes). ``cache_seconds`` counts time inside cache calls only, as CPU
time of this thread: on a shared machine another process taking the core mid-call would
otherwise be charged to whichever cache was running; the garbage collector is paused during a
run, as ``timeit`` pauses it. Engine and reference take turns, the
order flipping each round, and each keeps its best run; ``median_round_ratio`` is the
median of the per-round ratios, a second view that one lucky run cannot move.

    python bench/modern_core.py --quick
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))   # the oracles

import torch  # noqa: E402

from oracles.naive_modern import NaiveModernRadixCache  # noqa: E402
from radixviz.cache import ModernRadixCache, TokenToKVPool  # noqa: E402
from workload import DEFAULT, QUICK, make_workload  # noqa: E402  (bench/core.py's workload)

PAGE_SIZES = (1, 16)
POLICY = "lru"


def drive(cache, workload, pool_size: int, page: int) -> dict:
    pool = TokenToKVPool(pool_size, device="cpu")
    record, evicted = [], []
    clock = time.thread_time  # CPU time: immune to other processes taking the core
    in_cache = in_callback = 0.0

    def free(slots):
        nonlocal in_callback
        start = clock()
        evicted.append(slots.tolist())
        pool.free(slots)
        in_callback += clock() - start

    began = time.perf_counter()
    for prompt, output in workload:
        start = clock()
        prefix, last = cache.match_prefix(prompt)
        delta = cache.inc_lock_ref(last)
        in_cache += clock() - start
        need = len(prompt) + len(output) - len(prefix)
        short = need - pool.available_size()
        gone = 0
        if short > 0:
            start = clock()
            gone = cache.evict(short, free)
            in_cache += clock() - start
        new = pool.alloc(need)
        if new is None:
            start = clock()
            released = cache.dec_lock_ref(last)
            in_cache += clock() - start
            record.append((len(prefix), delta, gone, None, released))
            continue
        pool.add_refs(prefix)
        slots = torch.cat((prefix, new))
        sequence = prompt + output
        whole = len(sequence) - len(sequence) % page
        start = clock()
        held = cache.insert(sequence[:whole], slots[:whole])
        in_cache += clock() - start
        pool.free(slots[:held])
        if whole < len(sequence):
            pool.free(slots[whole:])  # the partial last page is not cached
        start = clock()
        released = cache.dec_lock_ref(last)
        in_cache += clock() - start
        record.append((len(prefix), delta, gone, held, released))
    seconds = time.perf_counter() - began
    sizes = (cache.evictable_size(), cache.protected_size(), cache.total_size(), pool.used_size())
    digest = hashlib.sha256(repr((record, evicted, sizes)).encode()).hexdigest()[:16]
    return dict(seconds=seconds, cache_seconds=in_cache - in_callback, record=record,
                evicted=evicted, sizes=sizes, digest=digest)


def paused_gc(run, *args):
    """``run(*args)`` with the cyclic garbage collector paused, as ``timeit`` does: a collection
    walks the whole heap (the workload, the recorded slots) and lands inside whichever call
    happened to allocate, so it would time the bench's heap, not the cache."""
    gc.collect()
    gc.disable()
    try:
        return run(*args)
    finally:
        gc.enable()


def timed_drive(cache, workload, pool_size: int, page: int) -> dict:
    """``drive`` with the garbage collector paused (``paused_gc``)."""
    return paused_gc(drive, cache, workload, pool_size, page)


def run(workload, pool_size: int, repeat: int = 1, page_sizes=PAGE_SIZES, policy=POLICY) -> dict:
    """Time engine and reference at each page size (best of ``repeat``, taking turns)."""
    out: dict = {"policy": policy, "clock": "thread CPU time inside cache calls"}
    for page in page_sizes:
        makers = {"engine": lambda page=page: ModernRadixCache(page_size=page, eviction_policy=policy),
                  "naive": lambda page=page: NaiveModernRadixCache(page_size=page, eviction_policy=policy)}
        best: dict = {}
        ratios = []
        identical = True
        for round_ in range(repeat):
            order = list(makers) if round_ % 2 == 0 else list(reversed(makers))
            this_round = {}
            for name in order:
                result = timed_drive(makers[name](), workload, pool_size, page)
                this_round[name] = result["cache_seconds"]
                kept = best.setdefault(name, result)
                identical &= result["digest"] == kept["digest"]
                kept["seconds"] = min(kept["seconds"], result["seconds"])
                kept["cache_seconds"] = min(kept["cache_seconds"], result["cache_seconds"])
            ratios.append(this_round["naive"] / this_round["engine"])
        eng, naive = best["engine"], best["naive"]
        identical &= eng["digest"] == naive["digest"]
        out[f"page_{page}"] = dict(
            engine_cache_seconds=round(eng["cache_seconds"], 3),
            naive_cache_seconds=round(naive["cache_seconds"], 3),
            engine_seconds=round(eng["seconds"], 3), naive_seconds=round(naive["seconds"], 3),
            engine_vs_naive_cache_only=round(naive["cache_seconds"] / eng["cache_seconds"], 2),
            median_round_ratio=round(statistics.median(ratios), 2), rounds=repeat,
            matched_tokens=sum(r[0] for r in eng["record"]),
            evicted_nodes=len(eng["evicted"]), digest=eng["digest"], identical=identical,
        )
    out["identical"] = all(v["identical"] for k, v in out.items() if k.startswith("page_"))
    out["goal_3x_cache_only"] = all(v["engine_vs_naive_cache_only"] >= 3.0
                                    for k, v in out.items() if k.startswith("page_"))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--requests", type=int)
    parser.add_argument("--repeat", type=int)
    args = parser.parse_args(argv)
    params = dict(QUICK if args.quick else DEFAULT)
    if args.requests:
        params["requests"] = args.requests
    torch.set_num_threads(1)
    report = run(make_workload(args.seed, **params), params["pool"],
                 args.repeat or (1 if args.quick else 5))
    print(json.dumps(dict(workload=dict(params, seed=args.seed), **report), indent=2))
    return 0 if report["identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
