"""``radixviz simulate --workers N``: N copies of the scheduler loop behind a router.

``--router cache-aware`` runs one router and prints each worker's share; several
(``--router round-robin,cache-aware``, or none named: all of them) run on the same requests
and print a comparison table and charts of hit rate and balance. ``--json`` prints it all.
The cache-aware router's thresholds are SGLang's unless given. Bad input is one line, exit 2.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import json

from radixviz.cache.engines import engine_spec, option_owners
from radixviz.cache.options import EVICTION, PAGE
from radixviz.errors import UsageError
from radixviz.settings import Limit, arg_type
from radixviz.sim.routers import LAUNCHED_DEFAULTS as LAUNCHED, RouterConfig
from radixviz.sim.workloads import make_workload, request_count

from radixviz.render import cluster_report as report
from .simulate_modes import load_trace_option

if TYPE_CHECKING:
    import argparse

WORKERS = Limit("workers", 1, 64, default=4)
RATE = Limit("rate", 1, 10_000, default=2)
CLUSTER_REQUESTS = 256      # --requests when not given: enough for the routers to differ
CLUSTER_ENGINE = "2026"     # --engine when not given: today's cache, which has KV events
ROUTER_NAMES = ("round-robin", "random", "least-load", "cache-aware", "cache-aware-events")


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"must be between 0 and 1, not {value}")
    return value


def _at_least_one(text: str) -> float:
    value = float(text)
    if value < 1.0:
        raise ValueError(f"must be at least 1, not {value}")
    return value


def add_cluster_args(p: argparse.ArgumentParser) -> None:
    """The options of ``simulate --workers``."""
    g = p.add_argument_group("several workers behind a router (--workers N)")
    g.add_argument("--workers", type=WORKERS.arg, metavar="N",
                   help="run N workers, each its own scheduler loop, pool (--pool-size each) and cache")
    g.add_argument("--router", metavar="R,R,...",
                   help=f"{', '.join(ROUTER_NAMES)} (cache-aware-events is radixviz's own: SGLang's "
                        "gateway reads no KV events); several are compared on the same requests "
                        "(default: all of them)")
    g.add_argument("--rate", type=RATE.arg, default=RATE.default, metavar="R",
                   help=f"new requests arriving per pass (default {RATE.default})")
    g.add_argument("--cache-threshold", type=arg_type(_fraction), default=LAUNCHED.cache_threshold,
                   metavar="F", help="cache-aware: the share of a prompt a worker must hold to get it "
                                     "(default 0.3, as SGLang launches its router; its library default is 0.5)")
    g.add_argument("--balance-abs-threshold", type=Limit("threshold", 0, 10**9).arg,
                   default=LAUNCHED.balance_abs_threshold, metavar="N",
                   help="cache-aware: loads count as imbalanced when the busiest worker has more than N "
                        "requests more than the idlest (default 64; the library's 32) and")
    g.add_argument("--balance-rel-threshold", type=arg_type(_at_least_one), default=LAUNCHED.balance_rel_threshold,
                   metavar="F", help="more than F times as many (default 1.5; the library's 1.1)")
    g.add_argument("--max-tree-size", type=Limit("tree size", 1, 1 << 30).arg, metavar="T",
                   help="cache-aware: tokens its approximate tree keeps per worker (default 2**26, as launched; "
                        "the library's 10,000)")
    g.add_argument("--router-events", metavar="FILE,FILE,...",
                   help="recordings of servers' KV events (radixviz watch --record): worker k starts "
                        "holding what the k-th recorded server (or data-parallel rank) held when its "
                        "recording ended; cache-aware-events learns it from the workers' events, "
                        "cache-aware (which reads none) does not")
    g.add_argument("--low-match", choices=("min-load", "smallest-tree"), default="min-load",
                   help="cache-aware, when no worker holds enough of the prompt: the least loaded "
                        "worker (SGLang today) or the one with the smallest tree (SGLang 2024-11 to 2025-12)")


def parse_routers(text: str | None) -> list:
    if text is None:
        return list(ROUTER_NAMES)
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError(f"--router needs names, e.g. --router {','.join(ROUTER_NAMES)}")
    bad = [n for n in names if n not in ROUTER_NAMES]
    if bad:
        raise UsageError(f"unknown router {bad[0]!r}: choose from {', '.join(ROUTER_NAMES)}")
    return list(dict.fromkeys(names))


def cluster_only(args: argparse.Namespace) -> str:
    """The first option given that only means something with --workers ('' if none)."""
    for flag, value, default in (("--router", args.router, None), ("--rate", args.rate, 2),
                                 ("--cache-threshold", args.cache_threshold, LAUNCHED.cache_threshold),
                                 ("--balance-abs-threshold", args.balance_abs_threshold,
                                  LAUNCHED.balance_abs_threshold),
                                 ("--balance-rel-threshold", args.balance_rel_threshold,
                                  LAUNCHED.balance_rel_threshold),
                                 ("--max-tree-size", args.max_tree_size, None),
                                 ("--low-match", args.low_match, "min-load"),
                                 ("--router-events", args.router_events, None)):
        if value != default:
            return flag
    return ""


def check_cluster_args(args: argparse.Namespace, options: dict) -> list:
    """The routers to run; UsageError for what does not go with several workers."""
    if args.compare is not None or args.sweep is not None:
        raise UsageError("--workers compares routers: drop --compare and --sweep (--policy picks "
                         "each worker's scheduling policy)")
    if args.insert != "fixed":
        raise UsageError("--insert release is the first release's bug (#4): not with --workers")
    if args.model != "fake":
        raise UsageError("--workers runs the fake sampler: drop --model")
    routers = parse_routers(args.router)
    spec = engine_spec(args.engine)
    if "cache-aware-events" in routers and not spec.takes("kv_events"):   # the option the router turns on
        raise UsageError(f"router cache-aware-events reads KV events: --engine {'|'.join(option_owners('kv_events'))}")
    if len(options["policies"]) > 1:
        raise UsageError("--workers runs one scheduling policy in every worker: give one --policy")
    return routers


def run_cluster(args: argparse.Namespace, options: dict, page_size: int = PAGE.default,
                eviction: str | None = None) -> int:
    routers = check_cluster_args(args, options)
    if getattr(args, "app", False):
        return open_cluster_app(args, options, routers, page_size, eviction)
    specs = load_trace_option(args, "fake") if args.trace else make_workload(
        args.workload, options["requests"], options["seed"])
    name = args.trace if args.trace else args.workload
    held = recorded_servers(args)
    results, warmed = {}, []
    for router in routers:
        cluster = make_cluster(args, options, router, page_size, eviction)
        warmed = cluster.warm(held)
        cluster.submit(specs)
        results[router] = cluster.run()
    header = {"workload": name, "requests": request_count(specs), "workers": args.workers,
              "pool_size": options["pool_size"], "rate": args.rate, "seed": options["seed"],
              "engine": args.engine, "page_size": page_size, "policy": options["policies"][0]}
    if held:
        header["warm_start"] = warm_start_json(args.router_events, held, warmed)
    if args.json:
        print(json.dumps({**header, "results": {r: res.to_dict() for r, res in results.items()}}, indent=2))
    else:
        report.print_cluster(header, results)
    return 0


def make_cluster(args: argparse.Namespace, options: dict, router: str, page_size: int, eviction: str | None,
                 record: bool = False):
    """The Cluster for ``router`` with the command's settings (each worker inserts its prompts
    after prefill, #418, as SGLang's workers do under every router of 2024-11 on)."""
    from radixviz.sim.cluster import Cluster            # imports torch

    config = RouterConfig(cache_threshold=args.cache_threshold,
                          balance_abs_threshold=args.balance_abs_threshold,
                          balance_rel_threshold=args.balance_rel_threshold,
                          max_tree_size=args.max_tree_size or RouterConfig().max_tree_size,
                          low_match=args.low_match)
    engine_options = engine_spec(args.engine).pick({"page_size": page_size,
                                                     "eviction_policy": eviction or EVICTION.default})
    extra = {k: options[k] for k in ("max_running", "context_len") if k in options}
    return Cluster(args.workers, router, pool_size=options["pool_size"], policy=options["policies"][0],
                   seed=options["seed"], rate=args.rate, engine=args.engine,
                   engine_options=engine_options, config=config, record=record,
                   cache_unfinished=True, **extra)


def open_cluster_app(args: argparse.Namespace, options: dict, routers: list, page_size: int,
                     eviction: str | None) -> int:
    """``--app --workers N``: the workers' trees side by side, each request's route and why."""
    if args.json or args.trace:
        raise UsageError("--app shows one run: drop --json and --trace")
    if len(routers) != 1:
        raise UsageError("--app --workers shows one router: give one --router")
    if options["requests"] > 500:
        raise UsageError("--app --workers keeps every pass to step through: 500 requests at most")
    from radixviz.tui.app import RadixvizApp  # Textual: only when the app opens

    held = recorded_servers(args)

    def build():
        cluster = make_cluster(args, options, routers[0], page_size, eviction, record=True)
        cluster.warm(held)
        cluster.submit(make_workload(args.workload, options["requests"], options["seed"]))
        return cluster

    app = RadixvizApp("cluster", cluster_options={"build": build, "title": (
        f"{args.workload} · {args.workers} workers · {routers[0]} · {options['requests']} requests")})
    app.run()
    return app.return_code or 0


def recorded_servers(args: argparse.Namespace) -> list:
    """``--router-events``: what each recorded stream held at its end, one per worker in the
    order the files are given (a file with several data-parallel ranks gives several)."""
    if not getattr(args, "router_events", None):
        return []
    # msgspec and the wire's player: only for a run that reads recordings
    from radixviz.wire.held_prompts import recorded_servers as held_at_end

    from .watch import load_recording  # msgspec, as above
    files = recording_files(args.router_events)
    if not files:
        raise UsageError("--router-events needs recordings, e.g. --router-events a.rvkv,b.rvkv")
    held = [prompts for path in files for prompts in held_at_end(load_recording(path))]
    if len(held) > args.workers:
        raise UsageError(f"--router-events: {len(held)} recorded servers (or ranks) for {args.workers} "
                         f"workers: give --workers {len(held)} or fewer recordings")
    return held


def recording_files(text: str) -> list[str]:
    """The paths of ``--router-events a.rvkv,b.rvkv`` (blanks between commas dropped)."""
    return [f.strip() for f in text.split(",") if f.strip()]


def warm_start_json(files: str, held: list, warmed: list) -> dict:
    """What the workers started holding, per worker, for the report and --json."""
    return {"files": recording_files(files),
            "workers": [{"worker": k, "recorded_blocks": h.blocks, "recorded_tokens": h.tokens,
                         "prompts": w.paths, "held_tokens": w.tokens, "too_long": w.too_long,
                         "broken_chains": h.broken, "lora_blocks_left_out": h.namespaced}
                        for k, (h, w) in enumerate(zip(held, warmed))]}
