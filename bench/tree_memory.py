"""How much memory the 2026 engine's tree keeps per cached token, against the reference in
SGLang's shape (tests/oracles/naive_modern.py), on SGLang's own memory workload.

SGLang's ``test_memory_allocated`` (test/registered/unit/mem_cache/test_radix_cache_unit.py
at 9fbe6800a) inserts sequences that share a 10,000-token prefix, each with a 100-token
suffix of its own, and asks that the tensors the tree keeps stay under twice the slots it
caches. This runs the same workload at 100 and 1,000 sequences (the caller's value tensors
dropped after each insert, as there) and reports, for each cache:

- ``tensor_bytes_per_token``: the bytes of every tensor storage the tree still references
  (each counted once), over the tokens it caches: SGLang's measure, on the CPU;
- ``python_bytes_per_token``: everything the build allocated and the tree keeps (tracemalloc:
  nodes, key tuples, dicts, tensor headers and storages), over the same tokens;
- ``bound_ratio``: tensor bytes over SGLang's bound (2 x tokens x bytes per slot).

``engine_vs_sglang`` divides the engine's figures by the reference's (the goal: at most 1.5).

    python bench/tree_memory.py [--sequences 100,1000]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))   # the oracles

import torch  # noqa: E402

from oracles.naive_modern import NaiveModernRadixCache  # noqa: E402
from radixviz.cache import ModernRadixCache  # noqa: E402

PREFIX, SUFFIX, VOCAB = 10_000, 100, 1000


def workload(sequences: int, seed: int = 0) -> list:
    """Token tuples: one shared 10,000-token prefix, then 100 tokens of each sequence's own."""
    rng = random.Random(seed)
    prefix = [rng.randint(1, VOCAB) for _ in range(PREFIX)]
    return [tuple(prefix + [rng.randint(1, VOCAB) for _ in range(SUFFIX)]) for _ in range(sequences)]


def tensors_kept(root) -> int:
    """Bytes of the tensor storages the tree's nodes reference, each storage counted once."""
    seen, total, stack = set(), 0, [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children.values())
        names = getattr(type(node), "__slots__", ()) or vars(node)
        for name in names:
            value = getattr(node, name, None)
            if isinstance(value, torch.Tensor):
                storage = value.untyped_storage()
                if storage.data_ptr() not in seen:
                    seen.add(storage.data_ptr())
                    total += storage.nbytes()
    return total


def build(make, keys) -> dict:
    """Insert every key into a fresh cache; what its tree keeps afterwards."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    cache = make()
    next_slot = 0
    for key in keys:
        value = torch.arange(next_slot, next_slot + len(key), dtype=torch.int64)
        next_slot += len(key)
        cache.insert(key, value)
        del value   # the caller's tensor goes, as in SGLang's test
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    tokens = cache.total_size()
    tensor_bytes = tensors_kept(cache.root_node)
    return {"tokens": tokens, "tensor_bytes": tensor_bytes, "python_bytes": kept,
            "tensor_bytes_per_token": round(tensor_bytes / tokens, 2),
            "python_bytes_per_token": round(kept / tokens, 1),
            "bound_ratio": round(tensor_bytes / (2 * tokens * 8), 3)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequences", default="100,1000", help="comma-separated counts")
    args = parser.parse_args(argv)
    report: dict = {"benchmark": "tree_memory", "prefix": PREFIX, "suffix": SUFFIX,
                    "load": round(os.getloadavg()[0], 2)}
    ok = True
    for count in (int(n) for n in args.sequences.split(",")):
        keys = workload(count)
        engine = build(ModernRadixCache, keys)
        sglang = build(NaiveModernRadixCache, keys)
        ratios = {f"{what}_per_token": round(engine[f"{what}_per_token"] / sglang[f"{what}_per_token"], 2)
                  for what in ("tensor_bytes", "python_bytes")}
        ok &= engine["tokens"] == sglang["tokens"] and max(ratios.values()) <= 1.5
        report[f"sequences_{count}"] = {"engine": engine, "sglang_shape": sglang,
                                        "engine_vs_sglang": ratios}
    report["goal_within_1_5x"] = ok
    print(json.dumps(report, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
