"""Where a session's memory goes, frame by frame: a session of random inserts recorded as the
stepper records it (every micro-step a frame) until the tree has N nodes, then every object
reachable from its frames counted once, by what holds it. Prints JSON.

    python bench/frame_memory.py [--nodes 300,1000] [--pool-per-node 16]

Parts: ``pool_refcounts`` (the per-slot counts a frame shows, one tuple per change of the
pool), ``tree_snapshots`` (node snapshots with their key and value tuples), ``frames``
(Frame, Marks, the step's data, the engine's Event), ``other``. The goal (issue 24, item 5):
a 5,000-node session under 1 GB, growing linearly or better.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
import tracemalloc

from radixviz.script import Session, parse_script

TREE_TYPES = {"NodeSnapshot", "ModernNodeSnapshot", "TreeSnapshot", "ModernTreeSnapshot"}
FRAME_TYPES = {"Frame", "Marks", "PoolSnapshot", "Event", "mappingproxy", "OpRecord"}


def build(nodes: int, pool_per_node: int, seed: int = 7) -> Session:
    """Random inserts over a small alphabet until the tree has ``nodes`` nodes."""
    rng = random.Random(seed)
    session = Session(pool_size=pool_per_node * nodes + 1024, device="cpu")
    while True:
        for _ in range(20):
            key = "".join(rng.choice("abcdefgh") for _ in range(rng.randint(4, 14)))
            session.apply(parse_script(f'insert "{key}"')[0])
        if len(session.cache.snapshot().nodes) - 1 >= nodes:
            return session


def breakdown(session) -> dict:
    """Bytes reachable from the frames, each object once, by part (see the module's doc)."""
    pool_size = session.pool_size
    parts = {"pool_refcounts": 0, "tree_snapshots": 0, "frames": 0, "other": 0}
    seen: set = set()
    stack = [(frame, "frames") for frame in session.frames]
    while stack:
        obj, part = stack.pop()
        if id(obj) in seen or isinstance(obj, (int, float, bool, str, type(None))):
            continue
        seen.add(id(obj))
        kind = type(obj).__name__
        if kind in TREE_TYPES:
            part = "tree_snapshots"
        elif kind in FRAME_TYPES:
            part = "frames"
        if isinstance(obj, tuple) and len(obj) == pool_size and part == "frames":
            part = "pool_refcounts"
        parts[part] += sys.getsizeof(obj)
        stack.extend((child, part) for child in _children(obj))
    return parts


def _children(obj) -> list:
    if isinstance(obj, dict) or type(obj).__name__ == "mappingproxy":
        return [*obj.keys(), *obj.values()]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    found = list(vars(obj).values()) if hasattr(obj, "__dict__") else []
    for cls in type(obj).__mro__:
        found += [getattr(obj, s) for s in getattr(cls, "__slots__", ()) if hasattr(obj, s)]
    return found


def measure(nodes: int, pool_per_node: int) -> dict:
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    session = build(nodes, pool_per_node)
    built = time.perf_counter() - start
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    parts = breakdown(session)
    frames = len(session.frames)
    return {"tree_nodes": len(session.cache.snapshot().nodes) - 1, "frames": frames,
            "pool_slots": session.pool_size, "build_s": round(built, 1),
            "traced_mb": round(current / 1e6, 1), "traced_peak_mb": round(peak / 1e6, 1),
            "kb_per_frame": round(current / frames / 1e3, 2),
            "reachable_mb": {k: round(v / 1e6, 1) for k, v in parts.items()},
            "distinct_pool_refcount_tuples": len({id(f.pool.refcounts) for f in session.frames})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="300,1000")
    parser.add_argument("--pool-per-node", type=int, default=16,
                        help="pool slots per tree node (bench/tui.py's ratio)")
    args = parser.parse_args()
    result = {"load_average": os.getloadavg(),
              "sessions": [measure(int(n), args.pool_per_node) for n in args.nodes.split(",")]}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
