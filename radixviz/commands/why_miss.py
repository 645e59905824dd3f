"""``radixviz why-miss A B``: why the second prompt did not reuse the first (sim/why_miss.py).

A prompt is text (one token per UTF-8 byte, or a local tokenizer.json with --tokenizer) or
a JSON list of token ids; with ``--trace FILE`` A and B are request numbers of the trace
(from 1, in file order) and the requests between them are replayed between them; with
``--chat-template`` each is a JSON file of chat messages, rendered by the template and
tokenized (A's ending with its assistant reply: what the cache holds after it). With
``--recording FILE`` there is one prompt, B, looked up in what a recorded server held
(sim/why_miss_recording.py). One screen: both prompts around the place they part, each
cause and what it cost; ``-o FILE.svg`` saves it as SVG, ``--json`` prints the numbers.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import json

from radixviz.cache.evict_policy import POLICY_NAMES
from radixviz.errors import UsageError
from radixviz.files import ReadError, read_bytes
from radixviz.settings import HOST_SLOTS, PAGE_SIZE, SIM_POOL_SLOTS
from radixviz.sim.prompt_diff import chat_text, load_messages, load_template, message_at, part
from radixviz.sim.trace import TraceError
from radixviz.sim.traces import local_tokenizer, open_trace

from .why_miss_args import add_hybrid_args, add_request_args, hybrid_of, request_of
from .why_miss_view import draw

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "why-miss", help="explain why a prompt did not reuse an earlier one's cache",
        description="Replay prompt A, the requests between, then look prompt B up in today's "
                    "cache (SGLang v0.5.23's rules), and name every reason B computes tokens A had, "
                    "with what each cost: another rank, another namespace, where they differ, the "
                    "same batch, the last token, a logprob start, the page floor, an eviction, a host "
                    "copy too short to load back; with --window or --mamba-chunk (a hybrid model, on "
                    "the unified engine) a sliding window's cut and a missing Mamba state. Or look B "
                    "up in a server's recording (--recording).",
        epilog="docs/why-miss.md: each cause, and how a server reports its hits")
    p.add_argument("a", metavar="PROMPT_A", nargs="?",
                   help="text, a JSON list of token ids, (with --trace) a request number, or (with "
                        "--chat-template) a JSON file of messages; with --recording: B")
    p.add_argument("b", metavar="PROMPT_B", nargs="?", help="the later prompt, in the same form")
    p.add_argument("--page-size", type=PAGE_SIZE.arg, default=1, metavar="N", help="tokens a page (default 1)")
    add_request_args(p)
    p.add_argument("--between", action="append", default=[], metavar="PROMPT",
                   help="a request sent between A and B (repeat for more)")
    p.add_argument("--same-batch", action="store_true",
                   help="B was prefilled in the same batch as A (before A's prompt entered the tree)")
    p.add_argument("--pool-size", type=SIM_POOL_SLOTS.arg, default=None, metavar="S",
                   help="KV pool slots (default: room for every request, so nothing is evicted)")
    p.add_argument("--host-size", type=HOST_SLOTS.arg, default=None, metavar="N",
                   help="a host tier of N slots (larger than the pool, as SGLang of March 2026 requires): "
                        "evicted prompts are demoted there, and a host hit under 10 tokens is not loaded back")
    p.add_argument("--eviction-policy", default="lru", metavar="E", help="how the pool makes room (default lru)")
    add_hybrid_args(p)
    p.add_argument("--trace", metavar="FILE", help="A and B are request numbers of this trace")
    p.add_argument("--block-size", type=int, default=None, metavar="N",
                   help="with a Mooncake --trace: tokens per hash id (default 512)")
    p.add_argument("--recording", metavar="FILE",
                   help="look B up in what a recorded server held (watch --record); --rank-b, "
                        "--adapter-b and --salt-b say how B was sent")
    p.add_argument("--at-seq", type=int, default=None, metavar="N",
                   help="with --recording: B arrived after the server's batch N (default: at the end)")
    p.add_argument("--tokenizer", metavar="FILE", help="a local tokenizer.json for text prompts")
    p.add_argument("--chat-template", metavar="FILE",
                   help="a chat template (.jinja, or a tokenizer_config.json): A and B are JSON files of "
                        "messages; needs --tokenizer")
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
    except (TypeError, ValueError):
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


def _tokenizer(args: argparse.Namespace):
    """(encode, decode) of the local --tokenizer, or (None, None)."""
    if args.tokenizer is None:
        return None, None
    try:
        encode = local_tokenizer(args.tokenizer)
    except TraceError as error:
        raise UsageError(str(error)) from None
    from tokenizers import Tokenizer   # present: local_tokenizer loaded it
    tokenizer = Tokenizer.from_file(args.tokenizer)
    return encode, lambda ids: tokenizer.decode(ids, skip_special_tokens=False)


def _prompts(args: argparse.Namespace, encode):
    """(tokens A, tokens B, between, parting inputs) from the command line."""
    if args.trace is not None:
        if args.between:
            raise UsageError("--between lists requests by hand: with --trace they are the trace's")
        a, b, between = _from_trace(args)
        return a, b, between, {}
    if args.chat_template is not None:
        if encode is None:
            raise UsageError("--chat-template needs --tokenizer FILE (a local tokenizer.json)")
        try:
            template, messages_a, messages_b = (load_template(args.chat_template), load_messages(args.a),
                                                load_messages(args.b))
            text_a, text_b = chat_text(template, messages_a), chat_text(template, messages_b)
        except ValueError as error:
            raise UsageError(str(error)) from None
        return tuple(encode(text_a)), tuple(encode(text_b)), [], {
            "locate": lambda offset: message_at(template, messages_b, offset)}
    a, b = _tokens(args.a, encode), _tokens(args.b, encode)
    return a, b, [(_tokens(t, encode), None) for t in args.between], {}


def run(args: argparse.Namespace) -> int:
    from radixviz.sim.why_miss import explain  # the engine: today's cache imports torch

    if args.eviction_policy not in POLICY_NAMES:
        raise UsageError(f"unknown eviction policy {args.eviction_policy!r}: choose from {', '.join(POLICY_NAMES)}")
    if args.block_size is not None and (args.trace is None or args.block_size < 1):
        raise UsageError("--block-size (a whole number from 1) goes with a Mooncake --trace")
    encode, decode = _tokenizer(args)
    if args.recording is not None:
        return run_recorded(args, encode)
    if args.a is None or args.b is None:
        raise UsageError("give two prompts, A and B (or --recording FILE and one prompt)")
    if args.at_seq is not None:
        raise UsageError("--at-seq goes with --recording")
    a, b, between, texts = _prompts(args, encode)
    if not a or not b:
        raise UsageError("both prompts need at least one token")
    try:
        result = explain(request_of(args, "a", a), request_of(args, "b", b), page_size=args.page_size,
                         between=between, pool_size=args.pool_size, eviction=args.eviction_policy,
                         host_size=args.host_size, same_batch=args.same_batch, hybrid=hybrid_of(args))
    except ValueError as error:
        raise UsageError(str(error)) from None
    found = part(a, b, decode, **texts)
    result.parting = vars(found) if found is not None else None
    return _show(args, result, text=args.trace is None and args.tokenizer is None)


def run_recorded(args: argparse.Namespace, encode) -> int:
    from radixviz.sim.why_miss_recording import explain_recorded  # the engine's package: torch
    from radixviz.wire.recording import RecordingError, read_records  # msgspec: only with --recording

    prompts = [p for p in (args.a, args.b) if p is not None]
    if len(prompts) != 1 or args.trace or args.between or args.chat_template or args.same_batch:
        raise UsageError("--recording looks up one prompt, B: drop the second prompt, --trace, --between, "
                         "--chat-template and --same-batch")
    b = _tokens(prompts[0], encode)
    if not b:
        raise UsageError("the prompt needs at least one token")
    try:
        records = list(read_records(read_bytes(args.recording, 1024 * 2 ** 20)))
    except (ReadError, RecordingError) as exc:
        raise UsageError(f"{args.recording}: {exc}") from None
    sent = request_of(args, "b", b)
    space = " · ".join(p for p in (f"adapter {sent.adapter}" if sent.adapter else "",
                                   f"salt {sent.salt}" if sent.salt else "") if p) or None
    result = explain_recorded(records, b, rank=sent.rank, namespace=space, at_seq=args.at_seq)
    return _show(args, result, text=args.tokenizer is None)


def _show(args: argparse.Namespace, result, text: bool) -> int:
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    draw(result, text=text, svg=args.output)
    return 0
