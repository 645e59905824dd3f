"""The modes ``radixviz simulate`` shares between its two engines: a trace file, a sweep,
the app's scheduler screen, and the note that the 2024 engine drops priorities.

``simulate`` (the 2024 engine) and ``simulate_2026`` (today's cache in the same loop)
both call these; today's cache comes in as a cache factory and a header to print.
"""
from __future__ import annotations

import json
import sys

from rich.console import Console

from radixviz.errors import UsageError
from radixviz.settings import check_settings
from radixviz.sim.model_api import VOCAB_SIZE
from radixviz.sim.trace import TraceError, load_tokenizer
from radixviz.sim.traces import StreamedTrace, open_trace
from radixviz.sim.workloads import request_count

from . import capacity_charts as charts
from . import simulate_report as report


def later_options(args) -> dict:
    """The Scheduler switches for what SGLang changed after the first release."""
    return {"delay_shared_prefix": args.delay_shared_prefix,
            "cache_unfinished": args.cache_unfinished,
            "hold_back_shared_prefix": args.hold_back_shared_prefix}


def load_trace_option(args, model: str):
    """The trace's RequestSpecs, checked whole before anything runs (our own format), or a
    StreamedTrace (sim/traces: Mooncake, OpenAI logs, or timed), its first line checked."""
    try:
        specs = open_trace(args.trace, getattr(args, "format", "auto"),
                           block_size=getattr(args, "block_size", None), tokenizer=args.tokenizer,
                           ms_per_pass=getattr(args, "pass_ms", None), hf_tokenizer=load_tokenizer)
    except TraceError as error:
        raise UsageError(str(error)) from None
    if isinstance(specs, StreamedTrace):
        if model == "tiny":
            raise UsageError(f"{args.trace}: --model tiny needs the radixviz format's small token "
                             "ids: use --model fake")
        print(specs.note(), file=sys.stderr)
        return specs
    if model == "tiny":
        highest = max(max(s.input_ids) for s in _every_spec(specs))
        if highest >= VOCAB_SIZE:
            raise UsageError(f"{args.trace}: token id {highest} is outside the tiny model's "
                             f"{VOCAB_SIZE} tokens: use --model fake")
    return specs


def _every_spec(specs):
    for spec in specs:
        while spec is not None:
            yield spec
            spec = spec.then


def print_ignored_priorities(stats) -> None:
    """The 2024 engine's runs: say so when the requests carried priorities it dropped."""
    if any(p != 0 for s in stats for p in s.by_priority):
        print(report.IGNORED_PRIORITIES)


def run_sweep(args, name, sweep, policies, specs, options, common, header=None) -> int:
    """``header`` (today's cache: engine, page size, eviction policies) goes first in the
    JSON and, as its ``note``, above the table."""
    from radixviz.sim.sweep import SWEEPABLE, run_sweep as sweep_runs  # imports torch

    key, values = sweep
    points = sweep_runs(key, values, policies, workload=None if specs else name, specs=specs,
                        **common, **options)
    if args.json:
        print(json.dumps({**(header or {}), "workload": name, "sweep": {key: values},
                          "policies": policies, "settings": {k: v for k, v in options.items()},
                          "results": [p.to_dict(key) for p in points]}, indent=2))
        return 0
    if header:
        Console().print(header["note"], highlight=False)
    fixed = {"requests": request_count(specs) if specs else options["requests"],
             "pool_size": options["pool_size"]}
    fixed.pop(SWEEPABLE[key], None)   # page: not among these
    shown = [f"{v} requests" if k == "requests" else f"{v} slots" for k, v in fixed.items()]
    report.print_sweep(f"{name}: {', '.join(shown)}, seed {options['seed']}", key, points)
    sweep_extras(args, key, points)
    if not header:
        print_ignored_priorities(p.stats for p in points)
    return 0


def sweep_extras(args, key: str, points) -> None:
    """% of optimal and p95 TTFT under a one-setting sweep's hit rates, and ``--figure``."""
    from radixviz.sim.capacity import GridPoint  # its runs import torch

    grid = [GridPoint({key: p.value}, p.column, p.stats, p.traffic) for p in points if p.traffic]
    if len(grid) != len(points):
        return
    charts.print_latency_charts(Console(), [(f"{g.label} {g.policy}", g) for g in grid])
    if getattr(args, "figure", None):
        print(charts.save_figure(args.figure, grid))


def open_app(args, options: dict, cache: dict | None = None) -> int:
    """``--app``: the scheduler screen, already running these settings; ``cache`` (today's
    cache: ``{"cache_factory": ...}``) goes to the Scheduler the screen builds."""
    if args.json or args.compare or args.sweep or args.trace:
        raise UsageError("--app shows one policy at a time: drop --json, --compare, --sweep "
                         "and --trace")
    # the model name is checked by the screen's worker: importing the models here would
    # import torch before the first paint
    settings, error = check_settings(args.workload, options["policies"][0], options["seed"],
                                     options["requests"], options["pool_size"])
    if error:
        raise UsageError(f"--app: {error}")
    from radixviz.tui.app import RadixvizApp  # Textual: only when the app opens
    app = RadixvizApp("scheduler", scheduler_options={
        "settings": settings, "autorun": True, "model": args.model,
        "options": {**(cache or {}), "max_running": options.get("max_running"),
                    **later_options(args),
                    **({"context_len": options["context_len"]} if "context_len" in options else {})}})
    app.run()
    return app.return_code or 0


