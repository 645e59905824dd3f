"""``simulate``'s options for traces people have (radixviz/sim/traces): the format, a
Mooncake trace's block size, and how much trace time one scheduler pass stands for."""
from __future__ import annotations

import argparse

from radixviz.errors import UsageError
from radixviz.sim.traces import DEFAULT_MS_PER_PASS, FORMATS


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


def check_trace_args(args: argparse.Namespace) -> None:
    """Trace options without --trace, refused in one line; the default pace for a public format."""
    if args.trace is None:
        for flag, value, default in (("--format", args.format, "auto"), ("--block-size", args.block_size, None),
                                     ("--pass-ms", args.pass_ms, None)):
            if value != default:
                raise UsageError(f"{flag} goes with --trace FILE")
