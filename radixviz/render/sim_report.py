"""What ``radixviz simulate`` prints for a report (sim/engines/simulate.py), chosen by the
report's type: runs a column each, a sweep, and an engine's own (the host tier's,
hicache/views_sim_report.py, registered by the engine's views module, which is loaded first).

The tables are sim_tables.py's; every number also comes out of the report's ``to_json``.
"""
from __future__ import annotations

from functools import singledispatch
from typing import Any

from rich.console import Console

from radixviz.sim.engines.simulate import PolicyRuns, SweepRuns

from . import capacity_charts as charts
from . import sim_tables as tables
from .views import load_views

IGNORED_PRIORITIES = ("these requests carry priorities; the 2024 engine has no priority field and "
                      "ignores them (--engine 2026 --eviction-policy priority uses them)")


def show(report: Any, figure: str | None = None) -> None:
    """Print ``report``; ``figure`` (``--figure FILE``) also draws a sweep's charts to a file."""
    load_views(report)   # an engine's views module registers its own reports' view
    show_report(report, figure)


@singledispatch
def show_report(report: Any, figure: str | None) -> None:
    raise TypeError(f"no view of a {type(report).__name__} report")


@show_report.register
def _(report: PolicyRuns, figure: str | None) -> None:
    if report.header is not None:   # another engine's cache in the 2024 loop: say so first
        Console().print(report.header["note"], highlight=False)
    results = report.results
    if report.table == "evictions":
        tables.print_policies(report.workload, results)
    elif report.table == "compare":
        tables.print_compare(report.workload, results)
    else:
        tables.print_single(report.workload, next(iter(results.values())))
    if report.header is None:
        print_ignored_priorities(r.stats for r in results.values())


@show_report.register
def _(report: SweepRuns, figure: str | None) -> None:
    from radixviz.sim.sweep import SWEEPABLE  # imports torch (the runs have loaded it)

    if report.header is not None:
        Console().print(report.header["note"], highlight=False)
    settings = report.settings
    fixed = {"requests": report.requests, "pool_size": settings["pool_size"]}
    fixed.pop(SWEEPABLE[report.key], None)   # page: not among these
    shown = [f"{v} requests" if k == "requests" else f"{v} slots" for k, v in fixed.items()]
    tables.print_sweep(f"{report.workload}: {', '.join(shown)}, seed {settings['seed']}", report.key,
                       report.points)
    sweep_extras(figure, report.key, report.points)
    if report.header is None:
        print_ignored_priorities(p.stats for p in report.points)


def print_ignored_priorities(stats) -> None:
    """The 2024 engine's runs: say so when the requests carried priorities it dropped."""
    if any(p != 0 for s in stats for p in s.by_priority):
        print(IGNORED_PRIORITIES)


def sweep_extras(figure: str | None, key: str, points) -> None:
    """% of optimal and p95 TTFT under a one-setting sweep's hit rates, and ``--figure``."""
    from radixviz.sim.capacity import GridPoint  # its runs import torch

    grid = [GridPoint({key: p.value}, p.column, p.stats, p.traffic) for p in points if p.traffic]
    if len(grid) != len(points):
        return
    charts.print_latency_charts(Console(), [(f"{g.label} {g.policy}", g) for g in grid])
    if figure:
        print(charts.save_figure(figure, grid))
