"""``--publish ENDPOINT`` on ``sandbox`` and ``simulate``: the engine's KV events on the wire
while it runs (wire/live_publish.py), with the same options as ``run --publish``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import sys
from contextlib import contextmanager
from collections.abc import Iterator

from radixviz.cache.engines import option_owners
from radixviz.errors import UsageError
from radixviz.sim.pass_hooks import after_each_pass

from .wire_args import ENDPOINT, add_publisher_args, wire_for

if TYPE_CHECKING:
    import argparse


def add_live_publish_args(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--publish", type=ENDPOINT, default=None, metavar="ENDPOINT",
                   help=f"send the engine's KV events on SGLang's wire as {what} (needs an engine "
                        "with KV events: --engine 2026|hicache), e.g. tcp://*:5557; watch them "
                        "with radixviz watch")
    add_publisher_args(p, prefix="publish-")


@contextmanager
def live_publisher(args: argparse.Namespace) -> Iterator:
    """The LivePublisher of ``--publish`` (None without it); closed, with a note on stderr
    when nobody subscribed, when the block ends."""
    if not getattr(args, "publish", None):
        yield None
        return
    # pyzmq and msgspec: loaded only when publishing, not by every sandbox's or simulate's parser
    import zmq

    from radixviz.wire.live_publish import LivePublisher  # pyzmq and msgspec, as above
    try:
        live = LivePublisher(args.publish, args.publish_replay, args.publish_topic,
                             wait_s=args.publish_wait, linger_s=args.publish_wait if args.publish_replay else 0,
                             wire=wire_for(args.publish_wire, getattr(args, "engine", None)))
    except zmq.ZMQError as exc:
        raise UsageError(f"cannot open {args.publish}: {exc}") from None
    try:
        yield live
    finally:
        live.close()
        if live.waited_in_vain:
            print(f"note: no subscriber on {live.endpoint} after {args.publish_wait:g} s; published anyway",
                  file=sys.stderr)


def run_publishing(args: argparse.Namespace, run) -> int:
    """``simulate --publish``: ``run(args)`` with every run's passes on the wire."""
    with_events = option_owners("kv_events")   # the engines that take the option turning them on
    if args.engine not in with_events:
        raise UsageError(f"--publish sends KV events: add --engine {'|'.join(with_events)}")
    if args.workers is not None or getattr(args, "app", False):
        raise UsageError("--publish runs one loop in this process: drop --workers and --app")
    from radixviz.wire.live_publish import publish_each_pass  # pyzmq and msgspec: only when publishing

    with live_publisher(args) as live, after_each_pass(publish_each_pass(live)):
        return run(args)
