"""``radixviz publish ENDPOINT``: run a script on an engine and send its KV events on SGLang's
wire, so ``radixviz watch`` (or any SGLang KV-event subscriber) sees a "server" without a GPU.

One batch per operation that queued events (SGLang publishes only non-empty batches too).
``--json`` prints, after each batch, the blocks the engine's own tree holds, in the form
``watch --json`` prints the tree it rebuilt: the two streams of lines must agree.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import json
import sys

from radixviz.cache.engines import option_owners
from radixviz.errors import EXIT_OK, UsageError, excerpt
from radixviz.wire.from_engine import engine_blocks, wire_events
from radixviz.wire.publisher import Publisher

from .run import add_script_args, apply_all, new_session, read_ops, refused, reports_script_errors
from .wire_args import ENDPOINT, SECONDS, SEQ_LIST, add_publisher_args, open_publisher

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "publish", help="run a script and publish its KV events on SGLang's ZeroMQ wire",
        description="Run a script on a KV-event engine (2026 unless --engine says otherwise) and "
                    "publish each operation's events as SGLang does: three frames (topic, 8-byte "
                    "sequence number, msgpack batch), in the wire of SGLang 9fbe6800a or v0.5.23 "
                    "(--wire). ENDPOINT with * binds (tcp://*:5557, "
                    "SGLang's default), a host and port connects to a watcher that binds.",
        epilog="example: radixviz publish tcp://*:5557 --replay tcp://*:5558 -e 'insert abcd; "
               "insert abxy; evict 2' --interval 1; then radixviz watch tcp://localhost:5557 "
               "--replay tcp://localhost:5558 in another terminal")
    p.add_argument("endpoint", type=ENDPOINT, metavar="ENDPOINT")
    # only an engine with KV events can publish, and its events are always on
    add_script_args(p, skip=("kv_events",), only=option_owners("kv_events"))
    add_publisher_args(p)
    p.add_argument("--rank", type=int, default=0, metavar="R",
                   help="the DP rank to stamp; the ports move up by R as SGLang's do (default 0)")
    p.add_argument("--interval", type=SECONDS, default=0.0, metavar="S",
                   help="seconds between operations, to watch them arrive (default 0)")
    p.add_argument("--linger", type=SECONDS, default=None, metavar="S",
                   help="after the last batch, answer replay requests for S seconds "
                        "(default: until Ctrl-C)")
    p.add_argument("--buffer-steps", type=int, default=10_000, metavar="N",
                   help="batches kept for replay (SGLang's buffer_steps, default 10000)")
    p.add_argument("--drop", type=SEQ_LIST, default=frozenset(), metavar="SEQS",
                   help="sequence numbers to keep for replay but not send (to try a watcher's "
                        "gap recovery), e.g. --drop 2,3")
    p.add_argument("--json", action="store_true",
                   help="after each batch print the engine's own blocks as watch --json prints its tree")
    p.set_defaults(func=publish)


def batch_line(seq: int, rank: int, root_node) -> str:
    return json.dumps({"seq": seq, "dp_rank": rank, "blocks": engine_blocks(root_node)})


@reports_script_errors
def publish(args: argparse.Namespace) -> int:
    ops = read_ops(args)
    if args.buffer_steps < 1:
        raise UsageError("--buffer-steps must be 1 or more")
    args.events = args.kv_events = True   # the flag's name before and after the option registry
    session = new_session(args)
    pub = open_publisher(args.endpoint, args.replay, args.topic, buffer_steps=args.buffer_steps,
                         rank=args.rank, drop=args.drop, wire=args.wire or session.spec.wire)
    try:
        where = f"publishing on {pub.endpoint}" + (f", replay on {pub.replay_endpoint}" if pub.replay else "")
        print(f"{where}, topic {excerpt(args.topic, 200)}", file=sys.stderr, flush=True)   # typed: cut if long
        if not pub.wait_for_subscriber(args.wait):
            print(f"note: no subscriber after {args.wait:g} s; publishing anyway", file=sys.stderr)
        error = None
        for index, op in enumerate(ops):
            if index and args.interval:
                pub.serve(args.interval)
            error = apply_all(session, [op])
            if error is not None:
                break
            events = session.records[-1].kv_events
            if events:
                seq = pub.publish(wire_events(events, pub.wire))
                if args.json:
                    print(batch_line(seq, args.rank, session.cache.root_node), flush=True)
        print(f"sent {pub.seq} batches" + ("; answering replay requests until Ctrl-C" if
                                           args.linger is None and pub.replay else ""),
              file=sys.stderr, flush=True)
        linger(pub, args.linger)
    finally:
        pub.close()
    return refused(error) if error is not None else EXIT_OK


def linger(pub: Publisher, seconds) -> None:
    """Keep answering replay requests for ``seconds`` (None: until Ctrl-C)."""
    if seconds is None:
        if pub.replay is None:
            return
        while True:
            pub.serve(3600)
    pub.serve(seconds)
