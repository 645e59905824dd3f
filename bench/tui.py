"""Benchmark the app with Textual's Pilot: time to the first screen, and per-step repaint
latency on a 300-node tree. Prints JSON.

Goals: first screen under 1 s (measured in a fresh interpreter, torch not yet imported);
p95 step under 50 ms (CPU time from key press to repainted screen, see ``_timed_step``).

    python bench/tui.py [--nodes 300] [--steps 200]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import time

FIRST_SCREEN = r"""
import asyncio, sys, time, json
t0 = time.perf_counter()
from radixviz.tui.app import RadixvizApp
async def main():
    app = RadixvizApp(sys.argv[1], device="cpu", script_text=None)
    async with app.run_test(size=(100, 32)) as pilot:
        while app.first_paint is None:
            await asyncio.sleep(0.001)
        painted = app.first_paint - t0
        torch_loaded = app.torch_at_first_paint
        await app.workers.wait_for_complete()
        await pilot.pause()
        ready = time.perf_counter() - t0
    print(json.dumps({"first_screen_s": painted, "torch_loaded_at_first_screen": torch_loaded,
                      "engine_ready_s": ready}))
asyncio.run(main())
"""


def first_screen(start: str) -> dict:
    """Run the app in a fresh interpreter so torch's import time counts."""
    out = subprocess.run([sys.executable, "-c", FIRST_SCREEN, start], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def tree_script(nodes: int, seed: int = 7) -> str:
    """Inserts of random keys over a small alphabet until the tree has ``nodes`` nodes."""
    from radixviz.script import Session, parse_script
    rng = random.Random(seed)
    session, lines = Session(pool_size=8192, device="cpu"), []
    while len(session.cache.snapshot().nodes) - 1 < nodes:
        key = "".join(rng.choice("abcdefgh") for _ in range(rng.randint(4, 14)))
        line = f'insert "{key}"'
        session.apply(parse_script(line)[0])
        lines.append(line)
    lines.append('match "' + "".join(rng.choice("abcdefgh") for _ in range(10)) + '"')
    return "\n".join(lines)


async def step_latency(nodes: int, steps: int) -> dict:
    from radixviz.tui.app import RadixvizApp, wait_until_ready
    script = tree_script(nodes)
    app = RadixvizApp("sandbox", script_text=script, device="cpu", pool_size=8192)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until_ready(app, pilot)
        screen = app.screen
        model = screen.model
        tree_nodes = len(model.frames[-1].tree.nodes) - 1
        # start well into the history, where the tree is big
        model.go(len(model.frames) - steps - 1)
        screen.refresh_view()
        await pilot.pause()
        forward = [await _timed_step(pilot, "right") for _ in range(steps)]
        back = [await _timed_step(pilot, "left") for _ in range(min(steps, 50))]
    cpu = sorted(c for c, _ in forward)
    wall = sorted(w for _, w in forward)
    return {"tree_nodes": tree_nodes, "frames": len(model.frames), "steps": steps,
            "step_p50_ms": statistics.median(cpu), "step_p95_ms": _p95(cpu), "step_max_ms": cpu[-1],
            "back_step_p50_ms": statistics.median(c for c, _ in back),
            "pilot_wall_p50_ms": statistics.median(wall), "pilot_wall_p95_ms": _p95(wall)}


def _p95(values: list) -> float:
    return values[int(0.95 * (len(values) - 1))]


async def _timed_step(pilot, key: str) -> tuple[float, float]:
    """(CPU ms, wall ms) for one key press until the screen has repainted.

    The CPU time is the repaint latency: the work from key to painted screen. Wall time
    through Pilot also holds Pilot's own idle-detection sleeps (>= 20 ms each) and, on a
    shared machine, other processes' time slices, so it is reported but not the goal.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    await pilot.press(key)
    await pilot.pause()
    return (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=300)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    result = {"home": first_screen("home"), "sandbox": first_screen("sandbox")}
    result.update(asyncio.run(step_latency(args.nodes, args.steps)))
    result["goals"] = {"first_screen_s": 1.0, "step_p95_ms": 50.0}
    result["goals_met"] = (max(result["home"]["first_screen_s"], result["sandbox"]["first_screen_s"]) < 1.0
                           and result["step_p95_ms"] < 50.0)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
