"""``radixviz simulate``: run a workload through the first release's scheduler on the cache.

One policy prints its totals; ``--compare lpm,fcfs`` runs each policy on the same requests
and prints a table and a bar chart of hit rates; ``--sweep pool=512,1024`` runs every
policy (or those named) at each value. ``--trace FILE.jsonl`` replays your own requests
instead of a named workload (format: docs/simulation-api.md). ``--workers N --router ...``
runs N loops behind a router (simulate_cluster.py). ``--json`` prints everything as JSON.
Bad input is one line and exit 2, before anything runs.

This module parses and checks the command line; what differs per engine (its cache options,
refusals, runs and report) is the engine's ``Simulation`` (sim/engines/simulate.py, named by
its registry line), and render/sim_report.py prints the report.
"""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, cast

from radixviz.cache.engines import declared_options, engine_names, engine_spec, flag_owners
from radixviz.cache.evict_policy import POLICY_NAMES
from radixviz.cache.options import EVICTION, HOST_SIZE, PAGE, WRITE_POLICY
from radixviz.cache.write_policy import WRITE_POLICY_NAMES
from radixviz.errors import UsageError
from radixviz.render.sim_report import show
from radixviz.settings import (CONTEXT_LEN, HOST_SLOTS, MAX_RUNNING, PAGE_SIZE, SEED, SIM_POOL_SLOTS,
                               SIM_REQUESTS, arg_type)
from radixviz.sim import defaults as D
from radixviz.sim.defaults import CONTEXT_LEN as DEFAULT_CONTEXT
from radixviz.sim.engines.simulate import SimulateArgs, simulation
from radixviz.sim.traces.mooncake import Limits
from radixviz.sim.policies import POLICIES
from radixviz.sim.schedule_v0523 import (DEFAULT_POLICY as TODAYS_POLICY, POLICIES_0523, RELEASE_LOOP,
                                         SCHEDULERS, TODAYS_LOOP)
from radixviz.sim.workloads import WORKLOADS

from .capacity_charts import add_capacity_args, check_figure
from .engine_args import add_flag, given, refuse_foreign
from .live_publish_args import add_live_publish_args, run_publishing
from .simulate_capacity import parse_grid_option, run_grid_cli
from .simulate_cluster import CLUSTER_ENGINE, CLUSTER_REQUESTS, add_cluster_args, cluster_only, run_cluster
from .simulate_modes import load_trace_option, open_app
from .simulate_progress import progress_for
from .simulate_traces import add_trace_args, check_trace_args, trace_run_options

if TYPE_CHECKING:
    from radixviz.cache.engines import EngineSpec
    import argparse

def _logprob_start(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"must be a token position (0 or more), not {text!r}") from None
    if value < 0:
        raise ValueError(f"must be a token position (0 or more), not {value}")
    return value


LOGPROB_START = arg_type(_logprob_start)


# the numbers come checked from argparse (radixviz.settings); a sweep's values use the same limits
_SWEEP_LIMITS = {"pool": SIM_POOL_SLOTS, "requests": SIM_REQUESTS, "page": PAGE_SIZE, "host": HOST_SLOTS}


class _Default(str):
    """A default value that knows it was not typed (``--trace`` refuses typed ones only)."""


class _DefaultNumber(int):
    """The same for a number (argparse passes a default that is not text through untouched)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "simulate", help="run a workload through the scheduler and report cache hits",
        description="Simulate SGLang's first scheduler on the radix cache: match every waiting "
                    "request, order by policy, admit what fits, prefill, decode, insert on finish.")
    p.add_argument("--workload", default=_Default(D.WORKLOAD), metavar="W",
                   help=f"shared-prompt, few-shot, multi-turn, tree-of-thought, no-sharing, "
                        f"priority-mix (requests with priorities), multi-tenant (eight system "
                        f"prompts) or hot-prefix (one prompt behind most requests) (default {D.WORKLOAD})")
    p.add_argument("--policy", metavar="P", help=f"lpm, fcfs, random or weight (default {D.POLICY}); "
                                                 f"with --scheduler v0.5.23 also hrrn and "
                                                 f"shortest-prefill-first (default {TODAYS_POLICY})")
    p.add_argument("--scheduler", choices=SCHEDULERS, default=None,
                   help="whose scheduler runs the cache: 2024, the first release's loop (the 2024 and "
                        "2026 engines' default), or v0.5.23, SGLang of 2026-10-30: fcfs by default, "
                        "lpm and hrrn fall back to fcfs past 128 waiting requests, each match stops "
                        "one token short of the prompt, admission stops at the first request that "
                        "does not fit (docs/simulation-api.md)")
    p.add_argument("--logprob-start", type=LOGPROB_START, default=None, metavar="K",
                   help="every request asks for its prompt's logprobs from token K on (SGLang's "
                        "logprob_start_len): with --scheduler v0.5.23 a match stops at K")
    p.add_argument("--compare", metavar="P,P,...", help="run these policies on the same requests")
    p.add_argument("--requests", type=SIM_REQUESTS.arg, default=_DefaultNumber(cast(int, SIM_REQUESTS.default)),
                   metavar="N", help=f"number of requests (default {SIM_REQUESTS.default})")
    p.add_argument("--pool-size", type=SIM_POOL_SLOTS.arg, default=SIM_POOL_SLOTS.default, metavar="S",
                   help=f"KV pool slots (default {SIM_POOL_SLOTS.default})")
    p.add_argument("--seed", type=SEED.arg, default=SEED.default, metavar="S",
                   help=f"workload and sampler seed (default {SEED.default})")
    p.add_argument("--sweep", metavar="NAME=V,V,...",
                   help="run each policy at each value: pool=512,1024,2048, requests=32,64,128 or, "
                        "with --engine 2026, page=1,4,16; with --engine hicache, host=4096,8192 "
                        "(beside the GPU-only cache); "
                        "prints a table and a chart of hit rates")
    p.add_argument("--trace", metavar="FILE.jsonl",
                   help="replay your own requests: one JSON object a line with prompt (text or "
                        "token ids), output_len, optional arrival and session; or a Mooncake "
                        "trace or an OpenAI-style log (--format)")
    p.add_argument("--tokenizer", metavar="NAME",
                   help="with --trace: tokenize text prompts with a local tokenizer.json (the "
                        "tokenizers package) or a Hugging Face name (needs transformers); "
                        "default: one token per UTF-8 byte (OpenAI logs: per character)")
    add_trace_args(p)
    add_capacity_args(p)
    p.add_argument("--context-len", type=CONTEXT_LEN.arg, metavar="N",
                   help="longest sequence a request may reach (default 1024)")
    p.add_argument("--max-running", type=MAX_RUNNING.arg, metavar="N",
                   help="cap the requests running at once (a change from the release; default: "
                        "the release's request table, pool / 1024 x 256 rows, never a limit)")
    p.add_argument("--delay-shared-prefix", action="store_true",
                   help="#2442 (2024-12), lpm and weight only: sort last a request that shares 32+ "
                        "tokens with an earlier waiting one and hits at most 32 in the tree")
    p.add_argument("--cache-unfinished", action="store_true",
                   help="#418 (2024-05): insert each prompt when its prefill ends, not only when "
                        "the request finishes (SGLang's cache_unfinished_req)")
    p.add_argument("--hold-back-shared-prefix", action="store_true",
                   help="a stricter rule SGLang never had: refuse for a round a request that "
                        "shares 32+ new tokens with a running or admitted one")
    p.add_argument("--model", default="fake", metavar="M",
                   help="what produces tokens: fake (seeded sampler, default) or tiny "
                        "(a tiny transformer whose K/V fill the pool)")
    names = engine_names()   # read when the parser is built: a registered engine is offered
    p.add_argument("--engine", choices=names, default=None, metavar="|".join(names),
                   help=f"which cache, in the same 2024 scheduler loop: "
                        f"{'; '.join(f'{n}: {engine_spec(n).title}' for n in names)} (default "
                        f"{names[0]}; with --workers, {CLUSTER_ENGINE})")
    p.add_argument("--page-size", default=str(PAGE.default), metavar="P",
                   help=f"tokens per page, {PAGE_SIZE.low} to {PAGE_SIZE.high}, with --engine "
                        f"{_owner('pages')} (default {PAGE.default})")
    p.add_argument("--eviction-policy", default=EVICTION.default, metavar="E,E,...",
                   help=f"with --engine {_owner('eviction_policies')}: {', '.join(POLICY_NAMES)}; "
                        "several (comma-separated) are compared on the same requests")
    p.add_argument("--host-size", type=HOST_SLOTS.arg, default=None, metavar="N",
                   help=f"with --engine {_owner('host_tier')}: {HOST_SIZE.help}")
    p.add_argument("--write-policy", choices=WRITE_POLICY_NAMES, default=WRITE_POLICY.default, metavar="P",
                   help=f"with --engine {_owner('host_tier')}: {', '.join(WRITE_POLICY_NAMES)} "
                        f"(default {WRITE_POLICY.default})")
    for option in declared_options("simulate"):   # a registered engine's own options
        if option.flag_name and option.name not in OWN_FLAGS:
            add_flag(p, option)
    p.add_argument("--insert", choices=("fixed", "release"), default="fixed",
                   help="release: finish requests with the first release's insert (the whole "
                        "sequence as the key, one slot fewer as the value, bug #4) and report "
                        "how the evictable counter drifts")
    add_cluster_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--app", action="store_true",
                   help="open the app's scheduler screen on this run and step it batch by batch")
    add_live_publish_args(p, "each pass runs")
    p.set_defaults(func=run)


# the engine options whose flags simulate writes itself (several values, sweeps); every other
# option a registered engine declares gets its flag from the registry (engine_args.py)
OWN_FLAGS = ("page_size", "eviction_policy", "host_size", "write_policy")


def engine_flags(args: argparse.Namespace, spec: EngineSpec) -> dict:
    """The registry-made flags given, for the Scheduler's ``engine_options``; UsageError for
    one the engine does not take."""
    refuse_foreign(args, spec, "simulate", skip=OWN_FLAGS)
    return {option.name: getattr(args, option.name) for option in declared_options("simulate")
            if option.flag_name and option.name not in OWN_FLAGS and given(args, option)}


def _owner(capability: str) -> str:
    return flag_owners(capability)


def parse_options(args: argparse.Namespace) -> dict:
    """Checked options for runner.simulate; UsageError (one line) on a bad name. The numbers
    were checked by argparse, against the limits in ``radixviz.settings``."""
    typed = not isinstance(args.workload, _Default) or not isinstance(args.requests, _DefaultNumber)
    if args.trace is not None and typed:
        raise UsageError("--trace replays the file's requests: drop --workload and --requests")
    if args.tokenizer is not None and args.trace is None:
        raise UsageError("--tokenizer applies to text prompts in a --trace file")
    check_trace_args(args)
    if args.trace is None and args.workload not in WORKLOADS:
        raise UsageError(f"unknown workload {args.workload!r}: choose from {', '.join(WORKLOADS)}")
    options = {"requests": int(args.requests), "pool_size": args.pool_size, "seed": args.seed,
               **trace_run_options(args)}
    for name in ("max_running", "context_len"):
        if getattr(args, name) is not None:   # left out: the Scheduler's default
            options[name] = getattr(args, name)
    if args.compare is not None and args.policy:
        raise UsageError("give --policy or --compare, not both")
    check_figure(args)
    if args.sweep is not None and args.sweep.count("=") > 1:   # several settings at once
        options["grid"] = parse_grid_option(args.sweep)
    elif args.sweep is not None:
        options["sweep"] = parse_sweep_option(args)
    today = getattr(args, "scheduler", None) == TODAYS_LOOP
    known = list(POLICIES_0523) if today else list(POLICIES)
    default = known if args.sweep is not None else [TODAYS_POLICY if today else D.POLICY]
    names = args.compare.split(",") if args.compare is not None else (
        [args.policy] if args.policy else default)
    names = [n.strip() for n in names if n.strip()]
    if not names:
        raise UsageError(f"--compare needs policy names, e.g. --compare {','.join(known)}")
    bad = [n for n in names if n not in known]
    if bad:
        more = "" if today or bad[0] not in POLICIES_0523 else " (it is v0.5.23's: add --scheduler v0.5.23)"
        raise UsageError(f"unknown policy {bad[0]!r}: choose from {', '.join(known)}{more}")
    options["policies"] = list(dict.fromkeys(names))
    return options


def parse_sweep_option(args: argparse.Namespace) -> tuple[str, list[int]]:
    from radixviz.sim.sweep import parse_sweep  # the sweep runner imports torch

    try:
        key, values = parse_sweep(args.sweep)
    except ValueError as error:
        raise UsageError(str(error)) from None
    low, high = _SWEEP_LIMITS[key].low, _SWEEP_LIMITS[key].high
    for value in values:
        if not low <= value <= high:
            raise UsageError(f"--sweep {key}: each value must be between {low} and {high}, not {value}")
    # the engine's own refusals first
    simulation(engine_spec(args.engine), SimulateArgs.from_namespace(args)).check_sweep(key)
    if key == "host" and args.host_size is not None:
        raise UsageError("--sweep host= sets the host size: drop --host-size")
    if key == "page" and args.page_size != str(PAGE.default):
        raise UsageError("--sweep page= sets the page size: drop --page-size")
    if key == "requests" and args.trace is not None:
        raise UsageError("--sweep requests= needs a named workload; a trace has its own requests")
    return key, values


def run(args: argparse.Namespace) -> int:
    if args.publish:   # every run's passes on the wire (live_publish_args.py)
        return run_publishing(args, _run)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    if args.engine is None:   # several workers default to today's cache: it has KV events
        args.engine = CLUSTER_ENGINE if args.workers is not None else engine_names()[0]
    if args.workers is None and cluster_only(args):
        raise UsageError(f"{cluster_only(args)} goes with --workers N")
    if args.workers is not None and isinstance(args.requests, _DefaultNumber):
        args.requests = _DefaultNumber(CLUSTER_REQUESTS)
    given_scheduler = args.scheduler
    args.scheduler = args.scheduler or engine_spec(args.engine).scheduler
    if args.scheduler != RELEASE_LOOP and (args.workers is not None or getattr(args, "app", False)):
        raise UsageError(f"--workers and --app run the release's loop: drop "
                         f"{'--scheduler ' + args.scheduler if given_scheduler else '--workers and --app'}")
    options = parse_options(args)
    if "grid" in options:
        return run_grid_cli(args, options, options.pop("policies"))
    spec = engine_spec(args.engine)
    own = engine_flags(args, spec)   # refuses a flag of another engine's before any path runs
    engine = simulation(spec, SimulateArgs.from_namespace(args), own)   # what this engine does differently
    if args.workers is not None:
        return run_cluster(args, options, *engine.cluster_cache())
    engine.check()
    engine.prepare(options)
    if getattr(args, "app", False):
        return open_app(args, dict(options, policies=engine.policies), cache=engine.app_cache())
    from radixviz.sim.runner import MODELS  # imports torch

    if args.model not in MODELS:
        raise UsageError(f"unknown model {args.model!r}: choose from {', '.join(MODELS)}")
    # one pool and one context for every run: a trace line that could never run is refused from its header
    limits = Limits(args.pool_size, args.context_len or DEFAULT_CONTEXT) if args.sweep is None else None
    specs = load_trace_option(args, args.model, limits) if args.trace else None
    try:
        report = engine.run(specs, args.trace if args.trace else args.workload, options, progress_for)
    except MemoryError:
        raise UsageError(out_of_memory(args, options)) from None
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        show(report, getattr(args, "figure", None))
        if isinstance(args.requests, _DefaultNumber) and args.trace is None and "sweep" not in options:
            print(f"radixviz: {int(args.requests)} requests, the default: --requests N runs another number",
                  file=sys.stderr)
    return 0


def out_of_memory(args: argparse.Namespace, options: dict) -> str:
    """One line for a run that outgrew memory: what grew, and what to change."""
    if args.trace is None:
        return (f"out of memory simulating {args.workload} with {int(args.requests):,} requests: "
                "give fewer --requests or a smaller --pool-size")
    optimum = "; or leave out --optimum (its tables grow with the trace's distinct content)" if options.get(
        "optimum") else ""
    return (f"out of memory replaying {args.trace}: its requests (up to --max-waiting "
            f"{options.get('max_waiting', 0):,} waiting, each prompt held whole) or the pool "
            f"(--pool-size {args.pool_size:,}) outgrew this machine's memory: lower them{optimum}")
