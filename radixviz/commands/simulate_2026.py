"""``radixviz simulate --engine 2026``: the first release's scheduler loop on today's cache.

Only the cache is from 2026 (SGLang's radix cache of March 2026: pages, eviction policies);
the loop that drives it (admission, ordering, prefill, decode, finish) is still the one
from January 2024, and the output says so. ``--eviction-policy lru,lfu,...`` runs every
named eviction policy on the same requests and prints a table and a chart per policy.
"""
from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from radixviz.errors import UsageError

from .simulate_report import _title, print_compare, print_hit_rate_bars, print_single

LOOP_NOTE = ("scheduler loop: SGLang's first release (January 2024), unchanged; "
             "cache: SGLang's radix cache of March 2026")


def parse_cache_options(args) -> tuple[int, list]:
    """(page size, eviction policies) from the command line; UsageError on a bad one."""
    from radixviz.cache import POLICY_NAMES  # torch: only once the options are read

    try:
        page_size = int(args.page_size)
    except ValueError:
        raise UsageError(f"--page-size must be a whole number, not {args.page_size!r}") from None
    if not 1 <= page_size <= 4096:
        raise UsageError(f"--page-size must be between 1 and 4096, not {page_size}")
    names = [n.strip().lower() for n in args.eviction_policy.split(",") if n.strip()]
    if not names:
        raise UsageError(f"--eviction-policy needs names, e.g. {','.join(POLICY_NAMES)}")
    bad = [n for n in names if n not in POLICY_NAMES]
    if bad:
        raise UsageError(f"unknown eviction policy {bad[0]!r}: choose from {', '.join(POLICY_NAMES)}")
    return page_size, list(dict.fromkeys(names))


def run_todays(args, options: dict) -> int:
    page_size, evictions = parse_cache_options(args)
    if getattr(args, "app", False):
        raise UsageError("--app steps the 2024 engine only: drop --app to run --engine 2026")
    if options.pop("sweep", None) is not None or getattr(args, "trace", None):
        raise UsageError("--sweep and --trace run on the 2024 engine only: drop --engine 2026")
    policies = options.pop("policies")
    if len(policies) > 1 and len(evictions) > 1:
        raise UsageError("compare scheduling policies or eviction policies, not both at once")
    from radixviz.sim.runner import MODELS, simulate  # imports torch
    from radixviz.sim.todays_cache import todays_cache

    if args.model not in MODELS:
        raise UsageError(f"unknown model {args.model!r}: choose from {', '.join(MODELS)}")
    results = {}
    for policy in policies:
        for eviction in evictions:
            result = simulate(args.workload, policy, model=args.model,
                              delay_shared_prefix=args.delay_shared_prefix,
                              cache_factory=todays_cache(page_size, eviction), **options)
            result.settings.update(engine="2026", scheduler_loop="2024", page_size=page_size,
                                   eviction_policy=eviction)
            results[eviction if len(evictions) > 1 else policy] = result
    if args.json:
        print(json.dumps({"engine": "2026", "scheduler_loop": "2024 (first release, unchanged)",
                          "page_size": page_size, "eviction_policies": evictions,
                          "workload": args.workload,
                          "results": {name: r.to_dict() for name, r in results.items()}}, indent=2))
        return 0
    Console().print(f"{LOOP_NOTE}, page size {page_size}, eviction "
                    f"{', '.join(evictions)}", highlight=False)
    if len(evictions) > 1:
        print_policies(args.workload, results)
    elif len(results) > 1:
        print_compare(args.workload, results)
    else:
        print_single(args.workload, next(iter(results.values())))
    return 0


def print_policies(workload: str, results: dict) -> None:
    """One row per eviction policy (fits 80 columns), then a chart of hit rates."""
    table = Table()
    for name in ("eviction", "hit rate", "tokens computed", "tokens evicted", "finished"):
        table.add_column(name, justify="left" if name == "eviction" else "right", no_wrap=True)
    for name, result in results.items():
        stats = result.stats
        table.add_row(name, f"{stats.hit_rate:.1%}", f"{stats.prefill_computed + stats.decode_computed:,}",
                      f"{stats.evicted_tokens:,}", f"{stats.finished:,}")
    console = Console()
    console.print(_title(workload, next(iter(results.values())).settings), highlight=False)
    console.print(table)
    print_hit_rate_bars(console, results, name_width=8)
