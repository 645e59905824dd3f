"""``simulate``'s options for traces people have (radixviz/sim/traces): the format, a
Mooncake trace's block size, how much trace time one scheduler pass stands for, how many
requests may wait; and the run options a long trace asks about: the optimum, and how much
a failed allocation evicts, and whether a Mooncake trace's blocks are compared whole."""
from __future__ import annotations

import argparse

from radixviz.cache.engines import engine_spec
from radixviz.errors import UsageError
from radixviz.sim.engines import hooks_class
from radixviz.sim.defaults import MAX_WAITING, OPTIMUM_UP_TO
from radixviz.sim.traces import DEFAULT_MS_PER_PASS, FORMATS

# the Scheduler's choices (sim/scheduler.py imports torch: named again here, a test holds them equal)
ALLOC_EVICT = ("need", "shortfall")


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
        return value
    return parse


def add_trace_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default="auto",
                   help="with --trace: radixviz (our JSON lines), mooncake (timestamp, input_length, "
                        "output_length, hash_ids) or openai (messages or prompt); auto reads the "
                        "first line (default)")
    p.add_argument("--block-size", type=_positive(int), default=None, metavar="N",
                   help="a Mooncake trace's tokens per hash id (default 512)")
    p.add_argument("--pass-ms", type=_positive(float), default=None, metavar="MS",
                   help=f"arrival times drive the queue: MS milliseconds of trace time per scheduler "
                        f"pass (Mooncake and OpenAI logs with times: {DEFAULT_MS_PER_PASS:g} unless "
                        "given; our format's arrival is then milliseconds too)")


    p.add_argument("--max-waiting", type=_positive(int), default=None, metavar="N",
                   help=f"with --trace: at most N requests wait at once (default {MAX_WAITING:,}); a timed "
                        "arrival that finds the queue full is dropped and the report counts it, an "
                        "untimed one is read when there is room")
    p.add_argument("--optimum", action=argparse.BooleanOptionalAction, default=None,
                   help=f"count the best hit rate any order could reach (the SGLang paper's optimum) "
                        f"beside the run's (default: on for runs of up to {OPTIMUM_UP_TO:,} requests; "
                        "its tables grow with the trace's distinct content)")
    p.add_argument("--block-units", action=argparse.BooleanOptionalAction, default=None,
                   help="with a Mooncake --trace: compare prompts block by block where the tree can "
                        "never part them, not token by token (the same answer, faster; default: where "
                        "the run can: engine 2024, the release's scheduler, without --app or "
                        "--insert release)")
    p.add_argument("--alloc-evict", choices=ALLOC_EVICT, default=None,
                   help="how much a failed allocation evicts: need (the allocation, as the 2024 "
                        "release and SGLang up to March 2026) or shortfall (need minus free, as "
                        "SGLang v0.5.23); default: the engine's SGLang's")


def check_trace_args(args: argparse.Namespace) -> None:
    """Trace options without --trace, refused in one line; the default pace for a public format."""
    if args.trace is None:
        for flag, value, default in (("--format", args.format, "auto"), ("--block-size", args.block_size, None),
                                     ("--pass-ms", args.pass_ms, None), ("--max-waiting", args.max_waiting, None),
                                     ("--block-units", args.block_units, None)):
            if value != default:
                raise UsageError(f"{flag} goes with --trace FILE")
    if args.block_units:
        why = block_units_refusal(args)
        if why:
            raise UsageError(f"--block-units: {why}; leave it out to compare token by token")
    if args.workers is not None:
        for flag, value in (("--max-waiting", args.max_waiting), ("--optimum", args.optimum),
                            ("--alloc-evict", args.alloc_evict), ("--block-units", args.block_units)):
            if value is not None:
                raise UsageError(f"{flag} applies to one scheduler loop, not to --workers")


def block_units_refusal(args: argparse.Namespace) -> str:
    """Why ``--block-units`` cannot run with these options, in their words ("" when it can;
    the Scheduler refuses the same, later: sim/scheduler.py)."""
    if getattr(args, "app", False):
        return "--app shows tokens"
    if getattr(args, "insert", "fixed") != "fixed":
        return "--insert release is one slot short of a token"
    if getattr(args, "scheduler", None) == "v0.5.23":
        return "--scheduler v0.5.23 matches a prompt one token short, inside its last block"
    if not hooks_class(engine_spec(args.engine)).block_units:
        return f"engine {args.engine} cannot be keyed by blocks (its sizes are not its values' lengths)"
    return ""


def trace_run_options(args: argparse.Namespace) -> dict:
    """What these options ask of every run (``runner.replay``'s keywords), those given only;
    a streamed trace's queue is bounded by default."""
    options: dict = {}
    if args.optimum is not None:
        options["optimum"] = args.optimum
    if args.alloc_evict is not None:
        options["alloc_evict"] = args.alloc_evict
    if args.block_units is not None:
        options["block_units"] = args.block_units
    if args.trace is not None:
        options["max_waiting"] = args.max_waiting or MAX_WAITING
    return options
