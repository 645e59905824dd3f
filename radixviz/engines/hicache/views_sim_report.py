"""What ``simulate --engine hicache`` prints: a column per run (the GPU-only baseline first),
a row per measure, then the hit rate's bars split by tier. Registered on sim_report.py's
``show_report`` by the host tier's views module (engines/hicache/views.py)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from radixviz.engines.hicache.sim import HostRuns

from radixviz.render.sim_report import show_report
from radixviz.sim.schedule_v0523 import RELEASE_LOOP, loop_words

LOOP_NOTE = ("scheduler loop: SGLang's first release (January 2024) with the host tier's hooks from "
             "its scheduler of March 2026; cache: SGLang's hierarchical radix cache of March 2026")

_ROWS = [  # (label, how to read it from a HostPoint)
    ("cache hit rate", lambda p: f"{p.stats.hit_rate:.1%}"),
    ("  hits on the device", lambda p: f"{p.stats.hit_tokens - p.stats.host_hit_tokens:,}"),
    ("  hits loaded from host", lambda p: f"{p.stats.host_hit_tokens:,}"),
    ("prompt tokens computed", lambda p: f"{p.stats.prefill_computed:,}"),
    ("tokens written to host", lambda p: _moved(p, "written")),
    ("tokens loaded to device", lambda p: _moved(p, "loaded")),
    ("device copies dropped, host kept", lambda p: _moved(p, "demoted")),
    ("device copies deleted", lambda p: _moved(p, "dropped")),
    ("host copies evicted", lambda p: _moved(p, "host_evicted")),
    ("requests finished", lambda p: f"{p.stats.finished:,}"),
]


def _moved(point, name: str) -> str:
    return f"{point.stats.host_tier[name]:,}" if point.stats.host_tier else "—"


@show_report.register
def print_host_table(report: HostRuns, figure: str | None = None) -> None:
    """A column per run (the GPU-only baseline first), a row per measure, then bars."""
    header, points = report.header, report.points
    console = Console()
    loop = header.get("scheduler_loop", RELEASE_LOOP).split(" ")[0]
    console.print(LOOP_NOTE if loop == RELEASE_LOOP else LOOP_NOTE.replace(
        "SGLang's first release (January 2024)", loop_words(loop)), highlight=False)
    console.print(f"{header['workload']}: {header['requests']} requests, {header['pool_size']} device "
                  f"slots, seed {header['seed']}, policy {header['policy']}, page {header['page_size']}, "
                  f"{header['eviction_policy']} eviction, {header['write_policy']}", highlight=False)
    table = Table(title="what the host tier adds (columns: host pool slots)")
    table.add_column("measure", no_wrap=True)
    for point in points:
        table.add_column(point.label, justify="right", no_wrap=True)
    for label, read in _ROWS:
        table.add_row(label, *(read(p) for p in points))
    console.print(table)
    width, base = 40, points[0].stats.hit_rate
    console.print("cache hit rate")
    for point in points:
        rate = point.stats.hit_rate
        device = point.stats.hit_tokens - point.stats.host_hit_tokens
        total = point.stats.hit_tokens + point.stats.prefill_computed
        on_device = round(device / total * width) if total else 0
        on_host = round(rate * width) - on_device
        gain = "" if point.host_size is None else f"  {(rate - base) * 100:+.1f} points"
        console.print(f"  {point.label:>9} [green]{'█' * on_device}[/green][blue]{'▓' * on_host}[/blue]"
                      f"{'·' * (width - on_device - on_host)} {rate:6.1%}{gain}", highlight=False)
    console.print("  █ hit on the device  ▓ loaded back from the host", highlight=False)
