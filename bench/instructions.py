"""Machine instructions inside cache calls, engine against reference: the ratio no load can move.

bench/core.py and bench/modern_core.py time the engines against the references in SGLang's
shape (tests/oracles/naive_*.py); on a shared machine those ratios move by tens of percent
from run to run. This counts instead: each variant runs bench/workload.py's seeded workload in
its own process under valgrind's callgrind, which counts the instructions executed inside
cache calls only (every call goes through ``operator.methodcaller``, and callgrind collects
inside that function alone; an eviction's pool work runs after the call returns). The counts
repeat to a few in a million, so two commits compare exactly.

    python bench/instructions.py                      # 2024, 2026 (pages of 1 and 16), with references
    python bench/instructions.py --variants e2024,e2026 --requests 100

Slow: valgrind runs Python about fifty times slower (a few minutes per variant). Needs
valgrind on PATH.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from operator import methodcaller
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = ("e2024", "naive2024", "e2026", "naive2026", "e2026p16", "naive2026p16")


def run_variant(variant: str, workload_file: str) -> None:
    """The request loop of bench/core.py (modern_core.py for 2026), every cache call counted."""
    import gc

    sys.path.insert(0, str(HERE.parent / "tests"))   # the references
    import torch

    from oracles.naive_modern import NaiveModernRadixCache
    from oracles.naive_radix import NaiveRadixCache
    from radixviz.cache import ModernRadixCache, RadixCache, TokenToKVPool

    torch.set_num_threads(1)
    gc.disable()
    with open(workload_file, "rb") as f:
        workload, pool_size = pickle.load(f)
    # one object per token value, as the generated workload's shared prompts have: unpickled
    # tokens would be distinct objects, and comparing them would cost what it never does
    same: dict = {}
    workload = [(tuple(same.setdefault(t, t) for t in p), tuple(same.setdefault(t, t) for t in o))
                for p, o in workload]
    makers = {"e2024": RadixCache, "naive2024": NaiveRadixCache,
              "e2026": ModernRadixCache, "naive2026": NaiveModernRadixCache}
    page = 16 if variant.endswith("p16") else 1   # the 2026 engine's pages (modern_core.py's two)
    cache = makers[variant.removesuffix("p16")](**({"page_size": page} if page > 1 else {}))
    lock, unlock = ("inc_lock_ref", "dec_lock_ref") if "2026" in variant else ("inc_ref_counter", "dec_ref_counter")
    pool = TokenToKVPool(pool_size, device="cpu")
    freed: list = []

    def free(slots):
        # the pool frees once the eviction returns, outside the count; an evicted leaf is
        # unlocked, so the tree alone held its slots and each of them becomes free
        freed.append(slots)
        return len(slots)

    for prompt, output in workload:
        prefix, last = methodcaller("match_prefix", prompt)(cache)
        methodcaller(lock, last)(cache)
        short = len(prompt) + len(output) - len(prefix) - pool.available_size()
        if short > 0:
            methodcaller("evict", short, free)(cache)
            for slots in freed:
                if pool.free(slots) != len(slots):
                    raise SystemExit("an evicted slot was still held")
            freed.clear()
        new = pool.alloc(len(prompt) + len(output) - len(prefix))
        if new is not None:
            pool.add_refs(prefix)
            sequence, slots = prompt + output, torch.cat((prefix, new))
            whole = len(sequence) - len(sequence) % page   # the partial last page is not cached
            held = methodcaller("insert", sequence[:whole], slots[:whole])(cache)
            pool.free(slots[:held])
            if whole < len(sequence):
                pool.free(slots[whole:])
        methodcaller(unlock, last)(cache)


def count(variant: str, workload_file: str) -> int:
    """Instructions inside ``variant``'s cache calls (callgrind's total for the collected part)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=methodcaller_call",
                        f"--callgrind-out-file={out}", sys.executable, __file__, "--run", variant,
                        workload_file], check=True, capture_output=True,
                       env=dict(os.environ, PYTHONHASHSEED="0"))
        for line in out.read_text().splitlines():
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no summary")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--run", nargs=2, help=argparse.SUPPRESS)   # the child under valgrind
    args = parser.parse_args(argv)
    if args.run:
        run_variant(*args.run)
        return 0
    if shutil.which("valgrind") is None:
        print("bench/instructions.py needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE))
    from workload import DEFAULT, make_workload

    params = dict(DEFAULT, requests=args.requests)
    with tempfile.NamedTemporaryFile(suffix=".pickle", delete=False) as f:
        pickle.dump((make_workload(0, **params), params["pool"]), f)
    try:
        counts = {v: count(v, f.name) for v in args.variants.split(",")}
    finally:
        os.unlink(f.name)
    ratios = {f"engine_vs_naive_{e}": round(counts[f"naive{e}"] / counts[f"e{e}"], 3)
              for e in ("2024", "2026", "2026p16") if f"e{e}" in counts and f"naive{e}" in counts}
    print(json.dumps(dict(requests=args.requests, instructions=counts, ratios=ratios), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
