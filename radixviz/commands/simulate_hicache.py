"""``radixviz simulate --engine hicache``: the first release's loop on the hierarchical cache.

The cache is SGLang's HiRadixCache of March 2026 (GPU and host tiers); the loop is the 2024
one with the three hooks SGLang's scheduler has for it (copies acknowledged every round,
host hits at match, load back at admission). One run prints its totals beside the GPU-only
cache on the same requests, with the hits split by tier and the tokens moved each way;
``--sweep host=N,N,...`` runs several host pool sizes against that baseline.
"""
from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from radixviz.errors import UsageError
from radixviz.sim import defaults as D
from radixviz.sim.workloads import make_workload, request_count

from . import simulate_modes as cli
from .simulate_2026 import parse_cache_options

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


def run_hicache(args, options: dict) -> int:
    """One run beside the GPU-only baseline, or ``--sweep host=``; ``--app`` steps one run."""
    page_size, evictions = parse_cache_options(args)
    if len(evictions) > 1:
        raise UsageError("--engine hicache runs one eviction policy at a time")
    policies, sweep = options.pop("policies"), options.pop("sweep", None)
    if len(policies) > 1 and (args.compare is not None or args.policy):
        raise UsageError("--engine hicache runs one scheduling policy at a time: give --policy")
    policies = policies[:1] if args.compare is None else policies   # a sweep's default: lpm alone
    if sweep is not None and not args.policy:
        policies = [D.POLICY]
    if sweep is not None and sweep[0] != "host":
        raise UsageError("--engine hicache sweeps host sizes: --sweep host=N,N,...")
    host_sizes = sweep[1] if sweep else [args.host_size]
    pool = options["pool_size"]
    for host in host_sizes:
        if host is not None and host <= pool:
            raise UsageError(f"host size {host}: the host pool must be larger than the pool "
                             f"({pool} slots), as SGLang requires")
        if host is not None and host % page_size:
            raise UsageError(f"host size {host} is not whole pages of {page_size}")
    cache = {"page_size": page_size, "eviction_policy": evictions[0], "write_policy": args.write_policy,
             "head_bugs": args.head_bugs or ()}
    if getattr(args, "app", False):
        from radixviz.sim.engines.hicache import host_options  # imports torch
        return cli.open_app(args, dict(options, policies=policies), cache={
            "engine": "hicache", "engine_options": host_options(host_size=args.host_size, **cache)})
    from radixviz.sim.engines.hicache import run_host_sweep  # imports torch
    from radixviz.sim.runner import MODELS

    if args.model not in MODELS:
        raise UsageError(f"unknown model {args.model!r}: choose from {', '.join(MODELS)}")
    specs = cli.load_trace_option(args, args.model) if args.trace else None
    name = args.trace if args.trace else args.workload
    requests, seed = options.pop("requests"), options.pop("seed")
    pool_size = options.pop("pool_size")
    if specs is None:
        specs = make_workload(args.workload, requests, seed)
    points = run_host_sweep(host_sizes, policies[0], workload=name, specs=specs, pool_size=pool_size,
                            seed=seed, model=args.model, **cache, **cli.later_options(args), **options)
    header = {"engine": "hicache", "scheduler_loop": "2024 (first release) + host-tier hooks",
              "page_size": page_size, "eviction_policy": evictions[0],
              "write_policy": args.write_policy, "policy": policies[0], "workload": name,
              **({"head_bugs": list(args.head_bugs)} if args.head_bugs else {}),
              "requests": request_count(specs), "pool_size": pool_size, "seed": seed,
              "baseline": "engine 2026, same page size and eviction policy (GPU only)"}
    if args.json:
        print(json.dumps({**header, "results": [p.to_dict() for p in points]}, indent=2))
        return 0
    print_host_table(header, points)
    return 0


def print_host_table(header: dict, points) -> None:
    """A column per run (the GPU-only baseline first), a row per measure, then bars."""
    console = Console()
    console.print(LOOP_NOTE, highlight=False)
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
