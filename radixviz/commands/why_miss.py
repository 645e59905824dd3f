"""``radixviz why-miss A B``: why the second prompt did not reuse the first (sim/why_miss.py).

A prompt is text (one token per UTF-8 byte, or a local tokenizer.json with --tokenizer) or
a JSON list of token ids; with ``--trace FILE`` A and B are request numbers of the trace
(from 1, in file order) and the requests between them are replayed between them. One
screen: both prompts around the place they part, the page boundaries, each cause and what
it cost; ``-o FILE.svg`` saves the same screen as SVG, ``--json`` prints the numbers.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import json

from radixviz.cache.evict_policy import POLICY_NAMES
from radixviz.errors import UsageError
from radixviz.settings import PAGE_SIZE, SIM_POOL_SLOTS
from radixviz.sim.trace import TraceError
from radixviz.sim.traces import local_tokenizer, open_trace

from .why_miss_view import draw, token_words

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "why-miss", help="explain why a prompt did not reuse an earlier one's cache",
        description="Replay prompt A, the requests between, then look prompt B up in today's "
                    "cache, and name every reason B computes tokens A had: where they differ, the "
                    "last-token rule, the page floor, a different namespace, an eviction.")
    p.add_argument("a", metavar="PROMPT_A", help="text, a JSON list of token ids, or (with --trace) a request number")
    p.add_argument("b", metavar="PROMPT_B", help="the later prompt, in the same form")
    p.add_argument("--page-size", type=PAGE_SIZE.arg, default=1, metavar="N", help="tokens a page (default 1)")
    p.add_argument("--namespace-a", metavar="KEY", help="A's extra key (a LoRA id, a cache salt)")
    p.add_argument("--namespace-b", metavar="KEY", help="B's extra key")
    p.add_argument("--between", action="append", default=[], metavar="PROMPT",
                   help="a request sent between A and B (repeat for more)")
    p.add_argument("--pool-size", type=SIM_POOL_SLOTS.arg, default=None, metavar="S",
                   help="KV pool slots (default: room for every request, so nothing is evicted)")
    p.add_argument("--eviction-policy", default="lru", metavar="E", help="how the pool makes room (default lru)")
    p.add_argument("--trace", metavar="FILE", help="A and B are request numbers of this trace")
    p.add_argument("--block-size", type=int, default=None, metavar="N",
                   help="with a Mooncake --trace: tokens per hash id (default 512)")
    p.add_argument("--tokenizer", metavar="FILE", help="a local tokenizer.json for text prompts")
    p.add_argument("-o", "--output", metavar="FILE.svg", help="also save the screen as SVG")
    p.add_argument("--json", action="store_true", help="print the explanation as JSON")
    p.set_defaults(func=run)


def _tokens(text: str, encode) -> tuple:
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            ids = json.loads(stripped)
        except json.JSONDecodeError:
            ids = None
        if isinstance(ids, list) and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in ids):
            return tuple(ids)
    return tuple(encode(text)) if encode else tuple(text.encode("utf-8"))


def _from_trace(args: argparse.Namespace) -> tuple:
    try:
        first, second = int(args.a), int(args.b)
    except ValueError:
        raise UsageError("with --trace, PROMPT_A and PROMPT_B are request numbers (from 1)") from None
    if min(first, second) < 1:
        raise UsageError(f"with --trace, requests are numbered from 1: {min(first, second)} is none of them")
    if first >= second:
        raise UsageError(f"with --trace, A must come before B (A < B), not {first} and {second}")
    try:
        trace = open_trace(args.trace, tokenizer=args.tokenizer, block_size=args.block_size)
        specs = list(trace)   # a list, or a streamed trace's requests in file order
    except TraceError as error:
        raise UsageError(str(error)) from None
    if second > len(specs):
        raise UsageError(f"{args.trace} has {len(specs)} requests, not {second}")
    chosen = [s.input_ids for s in specs[first - 1:second]]
    return chosen[0], chosen[-1], [(t, None) for t in chosen[1:-1]]


def run(args: argparse.Namespace) -> int:
    from radixviz.sim.why_miss import explain  # the engine: today's cache imports torch

    if args.eviction_policy not in POLICY_NAMES:
        raise UsageError(f"unknown eviction policy {args.eviction_policy!r}: choose from {', '.join(POLICY_NAMES)}")
    if args.block_size is not None and (args.trace is None or args.block_size < 1):
        raise UsageError("--block-size (a whole number from 1) goes with a Mooncake --trace")
    if args.trace is not None:
        if args.between:
            raise UsageError("--between lists requests by hand: with --trace they are the trace's")
        a, b, between = _from_trace(args)
    else:
        encode = None
        if args.tokenizer is not None:
            try:
                encode = local_tokenizer(args.tokenizer)
            except TraceError as error:
                raise UsageError(str(error)) from None
        a, b = _tokens(args.a, encode), _tokens(args.b, encode)
        between = [(_tokens(t, encode), None) for t in args.between]
    if not a or not b:
        raise UsageError("both prompts need at least one token")
    try:
        text = args.trace is None and args.tokenizer is None   # one token per UTF-8 byte
        result = explain(a, b, page_size=args.page_size, namespace_a=args.namespace_a,
                         namespace_b=args.namespace_b, between=between, pool_size=args.pool_size,
                         eviction=args.eviction_policy, token_words=token_words if text else repr)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    draw(result, text=text, svg=args.output)
    return 0
