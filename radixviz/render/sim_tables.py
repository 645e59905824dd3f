"""The tables of ``radixviz simulate``: totals for one policy, a policy comparison, a row per
eviction policy, a sweep (sim_report.py picks them for a report).

Tables and bars are Rich; every number also comes out of ``--json``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from radixviz.sim.schedule_v0523 import RELEASE_LOOP, TODAYS_LOOP
from radixviz.sim.workloads import WORKLOADS

if TYPE_CHECKING:
    from collections.abc import Collection
    from radixviz.sim.records import SimResult, SimStats

_ROWS = [  # (label, SimStats attribute); counts get thousands separators, the rate a percent
    ("cache hit rate", "hit_rate"),
    ("prompt tokens reused", "hit_tokens"),
    ("prompt tokens computed", "prefill_computed"),
    ("decode tokens computed", "decode_computed"),
    ("tokens evicted", "evicted_tokens"),
    ("prefill batches", "prefill_batches"),
    ("decode steps", "decode_steps"),
    ("peak pool use", "peak_pool_used"),
    ("requests finished", "finished"),
    ("refused (never fit)", "refused"),
    ("retracted (no memory)", "retracted"),
    ("sorted last (#2442)", "delayed"),
    ("held back (hold-back rule)", "held_back"),
]


def _loop_rows(table: Table, results: list) -> None:
    """v0.5.23's scheduler: the rounds its lpm or hrrn sorted nothing (more than 128 waiting)."""
    if any(r.settings.get("scheduler_loop") == TODAYS_LOOP for r in results):
        table.add_row("rounds run as fcfs (128+ waiting)", *(f"{r.stats.fallback_rounds:,}" for r in results))


def _cell(stats: SimStats, attribute: str) -> str:
    value = getattr(stats, attribute)
    return f"{value:.1%}" if attribute == "hit_rate" else f"{value:,}"


def priorities_of(results: Collection[SimResult]) -> list:
    """The request priorities other than 0 that finished in any of ``results``, in order."""
    return sorted({p for r in results for p in r.stats.by_priority if p != 0})


def _priority_rows(table: Table, results: Collection[SimResult]) -> None:
    """One row per priority, when the workload gives any: the hit rate of its requests."""
    levels = priorities_of(results)
    for level in ([0] + levels) if levels else ():
        table.add_row(f"hit rate, priority {level}",
                      *(f"{r.stats.priority_hit_rate(level):.1%}" for r in results))


def _engine_rows(table: Table, results: Collection[SimResult]) -> None:
    """A row per total the engine keeps of its own (``SimStats.engine_totals``), a cell per run."""
    for label in dict.fromkeys(name for r in results for name in r.stats.engine_totals):
        table.add_row(label, *(_total(r.stats.engine_totals.get(label, "–")) for r in results))


def _total(value) -> str:
    """A count as the table's other rows write theirs (9,143); a share or a dash as given."""
    return f"{value:,}" if isinstance(value, int) else str(value)


def _optimum_rows(table: Table, results) -> None:
    """The paper's optimum for these prompts, and each run's hit rate as a share of it."""
    optima = [r.traffic.get("optimum") for r in results]
    if not all(optima):
        return
    table.add_row("optimal hit rate (theorem)", *(f"{o['optimal_hit_rate']:.1%}" for o in optima))
    table.add_row("% of optimal", *("-" if o["share_of_optimal"] is None
                                    else f"{o['share_of_optimal']:.1%}" for o in optima))


def _dropped_rows(table: Table, results) -> None:
    """Arrivals a full waiting queue turned away (``--max-waiting``), when any run dropped some."""
    dropped = [r.traffic.get("dropped") for r in results]
    if any(dropped):
        table.add_row("dropped (queue full)", *(f"{d['requests']:,}" if d else "0" for d in dropped))


def _latency_rows(table: Table, results) -> None:
    """Time to first token in passes, and the share of it that the requests that missed took."""
    latencies = [r.traffic.get("latency") for r in results]
    if not all(latencies):
        return
    table.add_row("TTFT p50/p95/p99 (passes)", *(
        "{p50}/{p95}/{p99}".format(**lat["ttft_passes"]) for lat in latencies))
    table.add_row("missed (no hit): requests", *(
        f"{lat['missed']['requests']:,}" for lat in latencies))
    table.add_row("missed: share of TTFT", *(
        "-" if lat["missed"]["share_of_ttft_passes"] is None
        else f"{lat['missed']['share_of_ttft_passes']:.1%}" for lat in latencies))


def optimum_note(results: Collection[SimResult]) -> str:
    """One line under the table: what the optimum is, and whether its condition holds."""
    optimum = next(iter(results)).traffic.get("optimum")
    if not optimum:
        return ""
    return (f"optimal: 1 - {optimum['tree_tokens']:,} tokens of the prompts' radix tree / "
            f"{optimum['prompt_tokens']:,} prompt tokens (SGLang paper, §3); {optimum['note']}")


IGNORED_PRIORITIES = ("these requests carry priorities; the 2024 engine has no priority field and "
                      "ignores them (--engine 2026 --eviction-policy priority uses them)")


def _title(workload: str, settings: dict) -> str:
    loop = settings.get("scheduler_loop", RELEASE_LOOP)
    # a trace brings its own requests: its seed only drives the sampler of the output tokens
    seed = "seed" if workload in WORKLOADS else "sampler seed"
    return (f"{workload}: {settings['requests']} requests, {settings['pool_size']} slots, "
            f"{seed} {settings['seed']}" + (f", {loop}'s scheduler" if loop != RELEASE_LOOP else ""))


def print_single(workload: str, result: SimResult) -> None:
    settings, stats = result.settings, result.stats
    table = Table()
    table.add_column("measure", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    for label, attribute in _ROWS:
        table.add_row(label, _cell(stats, attribute))
    _optimum_rows(table, [result])
    _latency_rows(table, [result])
    _dropped_rows(table, [result])
    _priority_rows(table, [result])
    _engine_rows(table, [result])
    _loop_rows(table, [result])
    console = Console()
    console.print(f"{_title(workload, settings)}, policy {settings['policy']}", highlight=False)
    console.print(table)
    if optimum_note([result]):
        console.print(optimum_note([result]), markup=False, highlight=False)
    notable = [e for e in result.events
               if e.kind in ("drift", "refused", "retracted", "stuck", "prefill-deferred")]
    for event in notable[:10]:
        who = f"request #{event.rid} " if event.rid >= 0 else ""   # drift (#4) is the cache's
        console.print(f"  pass {event.batch}: {who}{event.kind}: {event.message}",
                      markup=False, highlight=False)
    if len(notable) > 10:
        console.print(f"  ... and {len(notable) - 10} more (see --json)")


def print_compare(workload: str, results: dict) -> None:
    first = next(iter(results.values())).settings
    table = Table()
    table.add_column("measure", no_wrap=True)
    for name in results:
        table.add_column(name, justify="right", no_wrap=True)
    for label, attribute in _ROWS:
        table.add_row(label, *(_cell(r.stats, attribute) for r in results.values()))
    _optimum_rows(table, list(results.values()))
    _latency_rows(table, list(results.values()))
    _dropped_rows(table, list(results.values()))
    _priority_rows(table, list(results.values()))
    _engine_rows(table, list(results.values()))
    _loop_rows(table, list(results.values()))
    console = Console()
    console.print(_title(workload, first), highlight=False)
    console.print(table)
    if optimum_note(results.values()):
        console.print(optimum_note(results.values()), markup=False, highlight=False)
    print_hit_rate_bars(console, results, name_width=7)


def print_policies(workload: str, results: dict) -> None:
    """One row per eviction policy (fits 80 columns), then a chart of hit rates."""
    levels = priorities_of(results.values())   # the workload's priorities other than 0
    table = Table(caption="; ".join(f"p{p} hits: hit rate of the priority-{p} requests"
                                    for p in levels) or None)
    columns = ["eviction", "hit rate", *(f"p{p} hits" for p in levels),
               "tokens computed", "tokens evicted", "finished"]
    for name in columns:
        table.add_column(name, justify="left" if name == "eviction" else "right", no_wrap=True)
    for name, result in results.items():
        stats = result.stats
        table.add_row(name, f"{stats.hit_rate:.1%}",
                      *(f"{stats.priority_hit_rate(p):.1%}" for p in levels),
                      f"{stats.prefill_computed + stats.decode_computed:,}",
                      f"{stats.evicted_tokens:,}", f"{stats.finished:,}")
    console = Console()
    console.print(_title(workload, next(iter(results.values())).settings), highlight=False)
    console.print(table)
    print_hit_rate_bars(console, results, name_width=8)


def print_hit_rate_bars(console: Console, results: dict, name_width: int) -> None:
    """One bar of the cache hit rate per named result (policy, or engine setting)."""
    console.print("cache hit rate")
    width = 40
    for name, r in results.items():
        filled = round(r.stats.hit_rate * width)
        console.print(f"  {name:>{max(name_width, *map(len, results))}} [green]{'█' * filled}[/green]"
                      f"{'·' * (width - filled)} "
                      f"{r.stats.hit_rate:6.1%}", highlight=False)


def print_sweep(title: str, key: str, points) -> None:
    """A table (one row per value, one column per policy) and bars of the hit rates."""
    values = list(dict.fromkeys(p.value for p in points))
    policies = list(dict.fromkeys(p.column for p in points))
    rate = {(p.value, p.column): p.stats.hit_rate for p in points}
    label = {"pool": "pool slots", "requests": "requests", "page": "page size"}[key]
    kind = "eviction policy" if points[0].eviction else "policy"
    table = Table(title=f"cache hit rate by {label}",
                  caption=f"* best {kind} at that value" if len(policies) > 1 else None)
    table.add_column(label, justify="right", no_wrap=True)
    for policy in policies:
        table.add_column(policy, justify="right", no_wrap=True)
    for value in values:
        best = max(rate[value, p] for p in policies)
        table.add_row(f"{value:,}", *(
            f"[bold]{rate[value, p]:.1%}*[/bold]" if rate[value, p] == best and len(policies) > 1
            else f"{rate[value, p]:.1%} " for p in policies))
    console = Console()
    console.print(title, highlight=False)
    console.print(table)
    width = 40
    for policy in policies:
        console.print(f"{policy}", highlight=False)
        for value in values:
            filled = round(rate[value, policy] * width)
            console.print(f"  {value:>9,} [green]{'█' * filled}[/green]{'·' * (width - filled)} "
                          f"{rate[value, policy]:6.1%}", highlight=False)
