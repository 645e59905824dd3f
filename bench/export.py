"""How long the views take on a ~1,000-node tree: Graphviz SVG and the Rich tree; and how
long a teacher waits for a 200-step run as a stepping HTML page and as an animated GIF.

Goals: SVG (DOT text + ``dot -Tsvg``) under 2 s; the Rich tree (every node drawn, nothing
folded) under 0.2 s. Two shapes, each from seeded random inserts of token ids so every run
draws the same trees: bushy (wide near the root) and deep (long chains). The classroom
exports: ``radixviz export SCRIPT -o x.html`` and ``-o x.gif`` on a 200-step script, each
under 10 s from the command line (start-up and torch import included). Prints JSON.

    .venv/bin/python bench/export.py [--nodes 1000] [--repeat 5] [--only trees|classroom]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import time

from rich.console import Console

from radixviz.cache import RadixCache
from radixviz.render.graphviz import render, to_dot
from radixviz.render.tree import TreeView

SVG_GOAL_S, RICH_GOAL_S = 2.0, 0.2


SHAPES = {"bushy": (6, 4, 40), "deep": (2, 20, 80)}  # vocabulary size, shortest and longest key


def build_tree(nodes: int, shape: str = "bushy", seed: int = 7):
    """A snapshot with about ``nodes`` nodes from random keys: a large vocabulary branches wide
    near the root, a two-token one makes long, deep chains of splits."""
    vocab, shortest, longest = SHAPES[shape]
    rng = random.Random(seed)
    cache = RadixCache(device="cpu")
    while len(cache.snapshot().nodes) < nodes:
        length = rng.randint(shortest, longest)
        cache.insert(tuple(rng.randrange(vocab) for _ in range(length)))
    return cache.snapshot()


def best_of(repeat: int, fn) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def rich_text(view) -> str:
    console = Console(file=io.StringIO(), width=160, color_system="truecolor", force_terminal=True)
    console.print(view)
    return console.file.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=("trees", "classroom"), default=None)
    parser.add_argument("--steps", type=int, default=200, help="steps of the classroom script")
    args = parser.parse_args()
    report = {}
    if args.only != "classroom":
        report.update({shape: measure(build_tree(args.nodes, shape), args.repeat) for shape in SHAPES})
    if args.only != "trees":
        report["classroom"] = measure_classroom(args.steps)
    print(json.dumps(report, indent=2))


CLASSROOM_GOAL_S = 10.0


def classroom_script(steps: int) -> str:
    """Seeded operations (shared prefixes, matches, a lock, evictions) with at least ``steps`` steps."""
    from radixviz.script import Session, parse_script

    rng = random.Random(11)
    session, lines = Session(pool_size=256, device="cpu"), []
    prompts = ["Hello_L.A.!", "Hello_world", "You are a helpful assistant. ", "Translate: "]
    while len(session.frames) < steps:
        prompt = rng.choice(prompts) + "".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 8)))
        line = rng.choice([f'insert "{prompt}"', f'insert "{prompt}"', f'match "{prompt}"', "evict 6"])
        for op in parse_script(line, "<bench>"):
            session.apply(op)
        lines.append(line)
    return "\n".join(lines) + "\n", len(session.frames)


def measure_classroom(steps: int) -> dict:
    """Wall time of ``radixviz export`` to .html and .gif, as a teacher runs it."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    if not shutil.which("dot"):
        return {"note": "Graphviz dot not installed"}
    text, count = classroom_script(steps)
    report = {"steps": count, "goal_s": CLASSROOM_GOAL_S}
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "class.rv"
        script.write_text(text, encoding="utf-8")
        for suffix in ("html", "gif"):
            out = Path(folder) / f"steps.{suffix}"
            cpu_before, start = _children_cpu(), time.perf_counter()
            subprocess.run([sys.executable, "-m", "radixviz", "export", str(script), "--device", "cpu",
                            "--pool-size", "256", "-o", str(out)], check=True, capture_output=True)
            took = time.perf_counter() - start
            report[suffix] = {"s": round(took, 2), "cpu_s": round(_children_cpu() - cpu_before, 2),
                              "bytes": out.stat().st_size, "ok": took < CLASSROOM_GOAL_S}
    # the machine is shared: a wall time far above the CPU time means others were running
    report["load_average_1min"] = round(os.getloadavg()[0], 1)
    return report


def _children_cpu() -> float:
    """CPU seconds used by finished child processes (the export and its dot processes)."""
    import resource
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(tree, repeat: int) -> dict:
    count = len(tree.nodes)
    dot_s, _ = best_of(repeat, lambda: to_dot(tree))
    report = {"nodes": count, "depth": max(len(tree.path_to(i)) for i in tree.nodes) - 1,
              "dot_text_s": round(dot_s, 4)}
    if shutil.which("dot"):
        svg_s, svg = best_of(max(1, repeat // 2), lambda: render(to_dot(tree), "svg"))
        report.update(svg_s=round(svg_s, 3), svg_bytes=len(svg), svg_goal_s=SVG_GOAL_S, svg_ok=svg_s < SVG_GOAL_S)
    else:
        report.update(svg_s=None, svg_note="Graphviz dot not installed")
    everything = dict(max_depth=10_000, max_children=10_000)
    full_s, full = best_of(repeat, lambda: rich_text(TreeView(tree, **everything)))
    folded_s, folded = best_of(repeat, lambda: rich_text(TreeView(tree)))
    report.update(rich_full_s=round(full_s, 4), rich_full_lines=full.count("\n"),
                  rich_folded_s=round(folded_s, 4), rich_folded_lines=folded.count("\n"),
                  rich_goal_s=RICH_GOAL_S, rich_ok=full_s < RICH_GOAL_S)
    return report


if __name__ == "__main__":
    main()
