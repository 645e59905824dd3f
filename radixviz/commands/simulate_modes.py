"""What ``radixviz simulate`` builds the same way for every engine: the requests of a trace
file, and the app's scheduler screen (an engine's ``Simulation`` gives it its cache).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import sys

from radixviz.errors import UsageError
from radixviz.settings import check_settings
from radixviz.sim.engines.simulate import later_options
from radixviz.sim.model_api import VOCAB_SIZE
from radixviz.sim.trace import TraceError, load_tokenizer
from radixviz.sim.traces import StreamedTrace, open_trace
from radixviz.sim.traces.mooncake import Limits

if TYPE_CHECKING:
    import argparse


def load_trace_option(args: argparse.Namespace, model: str, limits: Limits | None = None):
    """The trace's RequestSpecs, checked whole before anything runs (our own format), or a
    StreamedTrace (sim/traces: Mooncake, OpenAI logs, or timed), its first line checked.
    ``limits``: the one pool and context of the run, for refusing a request from its header."""
    try:
        specs = open_trace(args.trace, getattr(args, "format", "auto"),
                           block_size=getattr(args, "block_size", None), tokenizer=args.tokenizer,
                           ms_per_pass=getattr(args, "pass_ms", None), hf_tokenizer=load_tokenizer,
                           limits=limits)
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


def open_app(args: argparse.Namespace, options: dict, cache: dict | None = None) -> int:
    """``--app``: the scheduler screen, already running these settings; ``cache`` (today's
    cache: its ``engine`` and ``engine_options``) goes to the Scheduler the screen builds."""
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


