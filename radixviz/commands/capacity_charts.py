"""``simulate --figure FILE.svg|.png``: the flag and its check (render/capacity_charts.py
draws the sweep's charts and the figure)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.errors import UsageError

if TYPE_CHECKING:
    import argparse

FIGURE_SUFFIXES = (".svg", ".png")


def add_capacity_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--figure", metavar="FILE.svg|.png",
                   help="with --sweep: also draw hit rate, %% of optimal and p95 TTFT with matplotlib "
                        "(optional: pip install radixviz[figures])")


def check_figure(args: argparse.Namespace) -> None:
    figure = getattr(args, "figure", None)
    if figure is None:
        return
    if args.sweep is None:
        raise UsageError("--figure draws a sweep: add --sweep NAME=V,V,...")
    if not figure.lower().endswith(FIGURE_SUFFIXES):
        raise UsageError(f"--figure {figure}: the name must end in .svg or .png")
