"""What a capacity sweep prints: a table, then hit rate, % of optimal and p95 time to first
token as terminal bar charts (Rich only), and with ``--figure FILE.svg|.png`` the same three
as a matplotlib figure (an optional extra: ``pip install radixviz[figures]``; without it the
figure is skipped with one line and the rest still prints)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import json

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from collections.abc import Sequence
    from radixviz.sim.capacity import GridPoint

WIDTH = 36


def _pct(value) -> str:
    return "-" if value is None else f"{value:.1%}"


def _bars(console: Console, title: str, rows, shown, full: float | None = None) -> None:
    """One bar per (label, value): a full bar is ``full`` (a rate: 1), or at least the largest value."""
    console.print(title, highlight=False)
    top = max([full or 0, *(v for _, v in rows if v is not None)]) or 1
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        filled = 0 if value is None else round(value / top * WIDTH)
        console.print(f"  {label:>{width}} [green]{'█' * filled}[/green]{'·' * (WIDTH - filled)} {shown(value)}",
                      highlight=False)


def print_charts(console: Console, points: Sequence[GridPoint]) -> None:
    """The three charts of a sweep (GridPoints)."""
    labelled = [(f"{p.label} {p.policy}", p) for p in points]
    _bars(console, "cache hit rate", [(n, p.stats.hit_rate) for n, p in labelled], _pct, full=1)
    print_latency_charts(console, labelled)


def print_latency_charts(console: Console, labelled) -> None:
    """% of optimal and p95 TTFT, for ``(label, point)`` pairs (a one-setting sweep has its hit rates)."""
    _bars(console, "% of optimal (SGLang paper's theorem)", [(n, p.share_of_optimal) for n, p in labelled],
          _pct, full=1)
    _bars(console, "p95 time to first token (passes)", [(n, p.p95_ttft) for n, p in labelled],
          lambda v: f"{v:,}")


def print_grid(title: str, points: Sequence[GridPoint], note: str = "") -> None:
    keys = list(points[0].setting)
    over = any((p.share_of_optimal or 0) > 1 for p in points)
    table = Table(title="capacity sweep", caption="above 100 %: hits the theorem does not model "
                  "(a retracted request's second prefill, host-tier loads)" if over else None)
    for key in keys:
        table.add_column(key, justify="right", no_wrap=True)
    for name in ("policy", "hit rate", "% of optimal", "p95 TTFT"):
        table.add_column(name, justify="left" if name == "policy" else "right", no_wrap=True)
    for p in points:
        table.add_row(*(f"{p.setting[k]:,}" for k in keys), p.policy, f"{p.stats.hit_rate:.1%}",
                      _pct(p.share_of_optimal), f"{p.p95_ttft:,}")
    console = Console()
    console.print(title, highlight=False)
    if note:
        console.print(note, highlight=False)
    console.print(table)
    print_charts(console, points)


def grid_json(header: dict, points: Sequence[GridPoint]) -> str:
    return json.dumps({**header, "results": [p.to_dict() for p in points]}, indent=2)


def save_figure(path: str, points: Sequence[GridPoint]) -> str:
    """Draw the three measures against the sweep's settings; the line to print either way."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"--figure {path}: matplotlib is not installed (pip install radixviz[figures]): figure skipped"
    labels = list(dict.fromkeys(p.label for p in points))
    policies = list(dict.fromkeys(p.policy for p in points))
    measures = [("cache hit rate", lambda p: p.stats.hit_rate),
                ("% of optimal", lambda p: p.share_of_optimal or 0.0),
                ("p95 TTFT (passes)", lambda p: p.p95_ttft)]
    figure, axes = plt.subplots(1, 3, figsize=(13, 4))
    for axis, (title, value) in zip(axes, measures):
        for policy in policies:
            by_label = {p.label: value(p) for p in points if p.policy == policy}
            axis.plot(labels, [by_label[label] for label in labels], marker="o", label=policy)
        axis.set_title(title)
        axis.tick_params(axis="x", rotation=30)
    axes[0].legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return f"saved {path}"
