"""Peak memory of a sandbox session as the tree grows: 300, 1,000, 2,000 and 5,000 nodes.
Prints JSON.

Each size runs in a fresh interpreter, as a person runs ``radixviz sandbox`` on a script:
the real app (Textual's Pilot) loads a script of inserts of random keys over a small
alphabet (bench/tui.py's workload: seed 7, keys of 4-14 letters from ``abcdefgh``) until the
tree has N nodes, then

- steps through the history with the arrow keys at 10 places spread over it (``--places``;
  ``--steps`` presses each way at each place), and
- reads, for every frame of the history, what the views read of it (the tree's node index
  and parents, the pool's owners and free count): stepping through all of it.

The pool is sized so the tree fits (8,192 slots, or the next power of two over 5 slots a
node): with too small a pool the inserts evict as fast as they add and the tree never
reaches N nodes (bench/tui.py's 8,192-slot pool tops out near 2,100).

``peak_mb`` is the interpreter's peak resident memory (``ru_maxrss``), torch and Textual
included (``baseline_mb``: the same interpreter after importing them, before any session).
A child is stopped at ``--limit-mb`` of resident memory (checked every 20 ms, with an
address-space limit behind it), so a run that would take the machine is reported as
``over_limit`` instead. ``--baseline DIR`` also measures the radixviz package in DIR (an
older checkout, e.g. ``git archive COMMIT | tar -x -C DIR``), size by size alternately with
this one: a before/after in the same run.

    python bench/memory.py [--nodes 300,1000,2000,5000] [--limit-mb 3000] [--baseline DIR]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
import itertools

ALPHABET, SEED = "abcdefgh", 7


def pool_for(nodes: int) -> int:
    """A pool the tree of ``nodes`` nodes fits in without evicting."""
    size = 8192
    while size < 5 * nodes:
        size *= 2
    return size


def workload(nodes: int, pool_size: int) -> str:
    """The script: inserts of random keys until the 2024 engine's tree has ``nodes`` nodes
    (built on the engine alone, no frames, so the parent stays small)."""
    from radixviz.cache import TokenToKVPool
    from radixviz.cache.engines import open_engine
    engine = open_engine("2024", TokenToKVPool(pool_size, device="cpu"))
    rng, lines, count = random.Random(SEED), [], 0
    while count < nodes:
        # an insert adds at most two nodes (a split and a leaf): count again only when near
        for _ in range(max(1, (nodes - count) // 2)):
            key = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(4, 14)))
            slots = engine.pool.alloc(len(key))
            if slots is None:
                raise SystemExit(f"a pool of {pool_size} slots is too small for {nodes} nodes")
            engine.insert(key, slots)   # the facade frees the duplicated slots itself
            lines.append(f'insert "{key}"')
        count = _count_nodes(engine.cache.root_node) - 1
    lines.append('match "' + "".join(rng.choice(ALPHABET) for _ in range(10)) + '"')
    return "\n".join(lines)


def _count_nodes(root) -> int:
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.children.values())
    return count


# ---------------------------------------------------------------------------- the child

def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _guard(limit_mb: int, report: dict) -> None:
    """Stop this process (exit 3) once its resident memory passes ``limit_mb``, printing
    what it measured so far; an address-space limit catches what the sampling misses."""
    resource.setrlimit(resource.RLIMIT_AS, ((limit_mb + 4096) * 2**20,) * 2)

    def watch():
        while True:
            if _rss_mb() > limit_mb:
                report.update(over_limit=True, peak_mb=round(_peak_mb()))
                print(json.dumps(report), flush=True)
                os._exit(3)
            time.sleep(0.02)
    threading.Thread(target=watch, daemon=True).start()


async def _run_app(script: str, pool_size: int, steps: int, places: int, report: dict) -> None:
    from radixviz.tui.app import RadixvizApp, wait_until_ready
    start = time.perf_counter()
    app = RadixvizApp("sandbox", script_text=script, device="cpu", pool_size=pool_size)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_ready(app, pilot)
        screen, model = app.screen, app.screen.model
        frames = model.frames
        report.update(load_s=round(time.perf_counter() - start, 1), frames=len(frames),
                      tree_nodes=len(frames[-1].tree.nodes) - 1,
                      frames_dropped=getattr(frames, "dropped", 0), loaded_mb=round(_rss_mb()))
        first = getattr(frames, "dropped", 0)
        for place in range(places):
            model.go(first + (len(frames) - first - 1) * place // max(1, places - 1))
            screen.refresh_view()
            await pilot.pause()
            for key in ["right"] * steps + ["left"] * steps:
                await pilot.press(key)
            await pilot.pause()
        report["stepped_mb"] = round(_rss_mb())
        for frame in frames:    # what the views read, for every frame kept
            _ = frame.tree.nodes, frame.tree.parents, frame.pool.owners, frame.pool.free
        report["all_frames_read_mb"] = round(_rss_mb())
        report["run_s"] = round(time.perf_counter() - start, 1)


def child(args) -> None:
    report: dict = {"nodes": args.child, "pool_size": args.pool}
    _guard(args.limit_mb, report)
    import textual.app  # noqa: F401
    import torch  # noqa: F401
    report["baseline_mb"] = round(_rss_mb())
    script = Path(args.script).read_text()
    asyncio.run(_run_app(script, args.pool, args.steps, args.places, report))
    report["peak_mb"] = round(_peak_mb())
    print(json.dumps(report), flush=True)


# --------------------------------------------------------------------------- the parent

def measure(nodes: int, args, source: str | None = None) -> dict:
    """One size in a fresh interpreter, on the package in ``source`` (None: this checkout)."""
    pool_size = pool_for(nodes)
    with tempfile.NamedTemporaryFile("w", suffix=".rvz", delete=False) as script:
        script.write(workload(nodes, pool_size))
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    try:
        run = subprocess.run([sys.executable, __file__, "--child", str(nodes), "--pool", str(pool_size),
                              "--script", script.name, "--steps", str(args.steps),
                              "--places", str(args.places),
                              "--limit-mb", str(args.limit_mb)],
                             capture_output=True, text=True, env=env)
    finally:
        os.unlink(script.name)
    lines = run.stdout.strip().splitlines()
    if not lines:
        return {"nodes": nodes, "error": (run.stderr.strip().splitlines() or ["no output"])[-1],
                "over_limit": run.returncode != 0}
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="300,1000,2000,5000", help="comma-separated tree sizes")
    parser.add_argument("--steps", type=int, default=10, help="arrow presses each way at each place")
    parser.add_argument("--places", type=int, default=10, help="places in the history to step at")
    parser.add_argument("--limit-mb", type=int, default=3000, help="stop a size past this resident memory")
    parser.add_argument("--baseline", help="also measure the radixviz package in this folder")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pool", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--script", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    sizes = [int(n) for n in args.nodes.split(",")]
    result: dict = {"benchmark": "memory", "load_before": round(os.getloadavg()[0], 2),
                    "limit_mb": args.limit_mb, "sizes": [], "baseline": [] if args.baseline else None}
    for n in sizes:
        if args.baseline:
            result["baseline"].append(measure(n, args, args.baseline))
        result["sizes"].append(measure(n, args))
    result["load_after"] = round(os.getloadavg()[0], 2)
    result["mb_per_1000_nodes"] = growth(result["sizes"])
    if args.baseline:
        result["baseline_mb_per_1000_nodes"] = growth(result["baseline"])
        result["peak_mb_before_after"] = {
            r["nodes"]: [">" + str(b.get("peak_mb")) if b.get("over_limit") else b.get("peak_mb"),
                         r.get("peak_mb")] for b, r in zip(result["baseline"], result["sizes"])}
    result["goal"] = {"nodes": 5000, "peak_mb_under": 1024}
    five = next((r for r in result["sizes"] if r["nodes"] == 5000), None)
    if five is not None:
        result["goal_met"] = not five.get("over_limit") and five.get("peak_mb", 1e9) < 1024
    print(json.dumps(result, indent=2))


def growth(rows: list) -> list | None:
    """MB per 1,000 nodes between neighbouring sizes (linear growth: about constant)."""
    if len(rows) < 2 or any(r.get("over_limit") or "peak_mb" not in r for r in rows):
        return None
    return [round((b["peak_mb"] - a["peak_mb"]) * 1000 / (b["nodes"] - a["nodes"]), 1)
            for a, b in itertools.pairwise(rows)]


if __name__ == "__main__":
    main()
