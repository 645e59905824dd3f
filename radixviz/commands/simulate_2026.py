"""``radixviz simulate --engine 2026``: the first release's scheduler loop on today's cache.

Only the cache is from 2026 (SGLang's radix cache of March 2026: pages, eviction policies);
the loop that drives it (admission, ordering, prefill, decode, finish) is still the one
from January 2024, and the output says so. ``--eviction-policy lru,lfu,...`` runs every
named eviction policy on the same requests and prints a table and a chart per policy.
``--sweep``, ``--trace`` and ``--app`` work as on the 2024 engine. Requests' priorities
(``priority-mix``, a trace's ``priority``) reach the cache at insert, the one place
SGLang's scheduler passes them.
"""
from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from radixviz.cache.evict_policy import POLICY_NAMES
from radixviz.errors import UsageError
from radixviz.settings import PAGE_SIZE
from radixviz.sim import defaults as D
from radixviz.sim.workloads import make_workload, request_count

from . import simulate_modes as cli
from .simulate_progress import progress_for
from .simulate_report import _title, print_compare, print_hit_rate_bars, print_single, priorities_of

LOOP_NOTE = ("scheduler loop: SGLang's first release (January 2024), unchanged; "
             "cache: SGLang's radix cache of March 2026")


def parse_cache_options(args) -> tuple[int, list]:
    """(page size, eviction policies) from the command line; UsageError on a bad one."""

    try:
        page_size = PAGE_SIZE.parse(args.page_size)
    except ValueError as exc:
        raise UsageError(f"--page-size {exc}") from None
    names = [n.strip().lower() for n in args.eviction_policy.split(",") if n.strip()]
    if not names:
        raise UsageError(f"--eviction-policy needs names, e.g. {','.join(POLICY_NAMES)}")
    bad = [n for n in names if n not in POLICY_NAMES]
    if bad:
        raise UsageError(f"unknown eviction policy {bad[0]!r}: choose from {', '.join(POLICY_NAMES)}")
    return page_size, list(dict.fromkeys(names))


def run_todays(args, options: dict) -> int:
    """Every mode of ``simulate`` (one run, a comparison, ``--sweep``, ``--trace``, ``--app``)
    with today's cache in the 2024 loop."""
    page_size, evictions = parse_cache_options(args)
    policies = options.pop("policies")
    sweep = options.pop("sweep", None)
    if len(policies) > 1 and len(evictions) > 1:
        if sweep is None or args.compare is not None or args.policy:
            raise UsageError("compare scheduling policies or eviction policies, not both at once")
        policies = [D.POLICY]   # a sweep's default of every scheduling policy gives way
    from radixviz.sim.engines.v2026 import todays_cache  # imports torch

    caches = {eviction: todays_cache(page_size, eviction, engine=args.engine) for eviction in evictions}
    if getattr(args, "app", False):
        if len(evictions) > 1:
            raise UsageError("--app shows one eviction policy at a time: give one --eviction-policy")
        return cli.open_app(args, dict(options, policies=policies),
                            cache={"cache_factory": caches[evictions[0]]})
    from radixviz.sim.runner import MODELS, replay  # imports torch

    if args.model not in MODELS:
        raise UsageError(f"unknown model {args.model!r}: choose from {', '.join(MODELS)}")
    specs = cli.load_trace_option(args, args.model) if args.trace else None
    name = args.trace if args.trace else args.workload
    common = {"model": args.model, **cli.later_options(args)}
    pages = sweep[1] if sweep is not None and sweep[0] == "page" else page_size
    header = {"engine": args.engine, "scheduler_loop": "2024 (first release, unchanged)",
              "page_size": pages, "eviction_policies": evictions,
              "note": f"{LOOP_NOTE}, page size {', '.join(map(str, pages)) if pages != page_size else page_size}, "
                      f"eviction {', '.join(evictions)}"}
    if sweep is not None:
        cache = {"evictions": evictions, "page_size": page_size}
        return cli.run_sweep(args, name, sweep, policies, specs, options, {**common, **cache}, header)
    requests, pool_size, seed = (options.pop(k) for k in ("requests", "pool_size", "seed"))
    if specs is None:
        specs = make_workload(args.workload, requests, seed)
    results = {}
    for policy in policies:
        for eviction in evictions:
            progress = progress_for(f"{policy}, {eviction}", request_count(specs))
            result = replay(specs, policy, pool_size, seed, workload=name, progress=progress,
                            cache_factory=caches[eviction], **common, **options)
            if progress is not None:
                progress.done()
            results[eviction if len(evictions) > 1 else policy] = result
    if args.json:
        print(json.dumps({**header, "workload": name,
                          "results": {key: r.to_dict() for key, r in results.items()}}, indent=2))
        return 0
    Console().print(header["note"], highlight=False)
    if len(evictions) > 1:
        print_policies(name, results)
    elif len(results) > 1:
        print_compare(name, results)
    else:
        print_single(name, next(iter(results.values())))
    return 0


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
