"""``radixviz simulate``: run a workload through the first release's scheduler on the cache.

One policy prints its totals; ``--compare lpm,fcfs`` runs each policy on the same requests
and prints a table and a bar chart of hit rates. ``--json`` prints everything as JSON.
"""
from __future__ import annotations

import json

from radixviz.sim import defaults as D

# (name, lowest, highest): numbers are parsed here so a bad one is a one-line error
_LIMITS = {"requests": (1, 100_000), "pool_size": (16, 1 << 22), "seed": (0, 2**63 - 1),
           "max_running": (1, 4096)}


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "simulate", help="run a workload through the scheduler and report cache hits",
        description="Simulate SGLang's first scheduler on the radix cache: match every waiting "
                    "request, order by policy, admit what fits, prefill, decode, insert on finish.")
    p.add_argument("--workload", default=D.WORKLOAD, metavar="W",
                   help=f"shared-prompt, few-shot, multi-turn, tree-of-thought or no-sharing "
                        f"(default {D.WORKLOAD})")
    p.add_argument("--policy", metavar="P", help=f"lpm, fcfs, random or weight (default {D.POLICY})")
    p.add_argument("--compare", metavar="P,P,...", help="run these policies on the same requests")
    p.add_argument("--requests", default=str(D.REQUESTS), metavar="N",
                   help=f"number of requests (default {D.REQUESTS})")
    p.add_argument("--pool-size", default=str(D.POOL_SIZE), metavar="S",
                   help=f"KV pool slots (default {D.POOL_SIZE})")
    p.add_argument("--seed", default=str(D.SEED), metavar="S",
                   help=f"workload and sampler seed (default {D.SEED})")
    p.add_argument("--max-running", metavar="N",
                   help="cap the requests running at once (a change from the release; default: "
                        "the release's request table, pool / 1024 x 256 rows, never a limit)")
    p.add_argument("--delay-shared-prefix", action="store_true",
                   help="hold back requests whose prefix another request is computing (#2442)")
    p.add_argument("--model", default="fake", metavar="M",
                   help="what produces tokens: fake (seeded sampler, default) or tiny "
                        "(a tiny transformer whose K/V fill the pool)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--app", action="store_true",
                   help="open the app's scheduler screen on this run and step it batch by batch")
    p.set_defaults(func=run)


def parse_options(args) -> dict:
    """Checked options for runner.simulate; UsageError (one line) on a bad name or number."""
    from radixviz.cli import UsageError
    from radixviz.sim.policies import POLICIES
    from radixviz.sim.workloads import WORKLOADS

    if args.workload not in WORKLOADS:
        raise UsageError(f"unknown workload {args.workload!r}: choose from {', '.join(WORKLOADS)}")
    options = {}
    for name, (low, high) in _LIMITS.items():
        text = getattr(args, name)
        if text is None:  # an optional number left out: the Scheduler's default
            continue
        try:
            value = int(text)
        except ValueError:
            raise UsageError(f"--{name.replace('_', '-')} must be a whole number, not {text!r}") from None
        if not low <= value <= high:
            raise UsageError(f"--{name.replace('_', '-')} must be between {low} and {high}, not {value}")
        options[name] = value
    if args.compare is not None and args.policy:
        raise UsageError("give --policy or --compare, not both")
    names = args.compare.split(",") if args.compare is not None else [args.policy or D.POLICY]
    names = [n.strip() for n in names if n.strip()]
    if not names:
        raise UsageError(f"--compare needs policy names, e.g. --compare {','.join(POLICIES)}")
    bad = [n for n in names if n not in POLICIES]
    if bad:
        raise UsageError(f"unknown policy {bad[0]!r}: choose from {', '.join(POLICIES)}")
    options["policies"] = list(dict.fromkeys(names))
    return options


def run(args) -> int:
    from radixviz.cli import UsageError

    options = parse_options(args)
    if getattr(args, "app", False):
        return open_app(args, options)
    from radixviz.sim.runner import MODELS, compare  # imports torch

    if args.model not in MODELS:
        raise UsageError(f"unknown model {args.model!r}: choose from {', '.join(MODELS)}")
    policies = options.pop("policies")
    results = compare(args.workload, policies, model=args.model,
                      delay_shared_prefix=args.delay_shared_prefix, **options)
    if args.json:
        doc = {name: r.to_dict() for name, r in results.items()}
        print(json.dumps({"workload": args.workload, "results": doc} if args.compare
                         else doc[policies[0]], indent=2))
        return 0
    if args.compare:
        print_compare(args.workload, results)
    else:
        print_single(args.workload, results[policies[0]])
    return 0


def open_app(args, options: dict) -> int:
    """``--app``: the scheduler screen, already running these settings."""
    from radixviz.cli import UsageError

    if args.json or args.compare:
        raise UsageError("--app shows one policy at a time: drop --json and --compare")
    # the model name is checked by the screen's worker: importing the models here would
    # import torch before the first paint
    from radixviz.tui.widgets.scheduler_form import check_settings
    settings, error = check_settings(args.workload, options["policies"][0], options["seed"],
                                     options["requests"], options["pool_size"])
    if error:
        raise UsageError(f"--app: {error}")
    from radixviz.tui.app import RadixvizApp
    app = RadixvizApp("scheduler")
    app.scheduler_options = {"settings": settings, "autorun": True, "model": args.model,
                             "options": {"max_running": options.get("max_running"),
                                         "delay_shared_prefix": args.delay_shared_prefix}}
    app.run()
    return app.return_code or 0


# ---------------------------------------------------------------- Rich output

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
    ("held back (#2442)", "delayed"),
]


def _cell(stats, attribute: str) -> str:
    value = getattr(stats, attribute)
    return f"{value:.1%}" if attribute == "hit_rate" else f"{value:,}"


def _title(workload: str, settings: dict) -> str:
    return (f"{workload}: {settings['requests']} requests, {settings['pool_size']} slots, "
            f"seed {settings['seed']}")


def print_single(workload: str, result) -> None:
    from rich.console import Console
    from rich.table import Table

    settings, stats = result.settings, result.stats
    table = Table()
    table.add_column("measure", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    for label, attribute in _ROWS:
        table.add_row(label, _cell(stats, attribute))
    console = Console()
    console.print(f"{_title(workload, settings)}, policy {settings['policy']}", highlight=False)
    console.print(table)
    notable = [e for e in result.events if e.kind in ("refused", "retracted", "stuck", "prefill-deferred")]
    for event in notable[:10]:
        console.print(f"  pass {event.batch}: request #{event.rid} {event.kind}: {event.message}",
                      markup=False, highlight=False)
    if len(notable) > 10:
        console.print(f"  ... and {len(notable) - 10} more (see --json)")


def print_compare(workload: str, results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    first = next(iter(results.values())).settings
    table = Table()
    table.add_column("measure", no_wrap=True)
    for name in results:
        table.add_column(name, justify="right", no_wrap=True)
    for label, attribute in _ROWS:
        table.add_row(label, *(_cell(r.stats, attribute) for r in results.values()))
    console = Console()
    console.print(_title(workload, first), highlight=False)
    console.print(table)
    console.print("cache hit rate")
    width = 40
    for name, r in results.items():
        filled = round(r.stats.hit_rate * width)
        console.print(f"  {name:>7} [green]{'█' * filled}[/green]{'·' * (width - filled)} "
                      f"{r.stats.hit_rate:6.1%}", highlight=False)
