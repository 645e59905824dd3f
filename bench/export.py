"""How long the views take on a ~1,000-node tree: Graphviz SVG and the Rich tree.

Goals: SVG (DOT text + ``dot -Tsvg``) under 2 s; the Rich tree (every node drawn, nothing
folded) under 0.2 s. Two shapes, each from seeded random inserts of token ids so every run
draws the same trees: bushy (wide near the root) and deep (long chains). Prints JSON.

    .venv/bin/python bench/export.py [--nodes 1000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import io
import json
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
    args = parser.parse_args()
    print(json.dumps({shape: measure(build_tree(args.nodes, shape), args.repeat) for shape in SHAPES},
                     indent=2))


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
