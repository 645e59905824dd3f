"""``radixviz watch ENDPOINT``: listen to a server's KV events (SGLang's ZeroMQ wire) and
rebuild the cache they describe; ``--file`` plays a recording instead.

Without ``--json`` or ``--text`` the app draws the tree (tui/screens/watch_screen.py).
``--json`` prints one line per batch: ``seq``, ``dp_rank``, ``blocks`` (every block that
rank holds after it) and ``problems`` (the counts so far); the log's lines go to stderr.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import json
import sys
import time

import zmq

from radixviz.errors import EXIT_BAD_INPUT, EXIT_OK, UsageError
from radixviz.files import ReadError, read_bytes
from radixviz.wire.blocks import DEFAULT_MAX_BLOCKS, block_json
from radixviz.wire.core import WatchCore
from radixviz.wire.messages import DEFAULT_MAX_FRAME
from radixviz.wire.playback import core_for, play
from radixviz.wire.events import WIRE_WORDS
from radixviz.wire.tiers import tier_name, tier_rank
from radixviz.wire.recording import Recorder, RecordingError, read_records, recorded_wires
from radixviz.wire.subscriber import Watcher

from .wire_args import ENDPOINT, SECONDS

if TYPE_CHECKING:
    import argparse

MAX_RECORDING = 1024 * 2 ** 20     # a recording larger than this is refused
WATCH_WIRES = ("auto", *WIRE_WORDS)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "watch", help="draw a running server's cache from its KV events (SGLang's ZeroMQ wire)",
        description="Subscribe to a server's KV events (SGLang started with --kv-events-config "
                    "'{\"publisher\": \"zmq\", \"topic\": \"kv-events\"}' publishes on tcp://*:5557) "
                    "and rebuild its cache, one tree per DP rank. Or play a recording (--file).",
        epilog="examples: radixviz watch tcp://localhost:5557 --json --exit-after-idle 10; "
               "radixviz watch --file examples/kv-events.rvkv --json --speed 0. Exit codes: 0 ok, "
               "2 bad input (a recording that does not read, a socket that will not open).")
    p.add_argument("endpoint", nargs="?", type=ENDPOINT, metavar="ENDPOINT",
                   help="the publisher's endpoint, e.g. tcp://localhost:5557")
    p.add_argument("--file", metavar="FILE", help="play a recording made with --record instead")
    p.add_argument("--speed", type=float, default=None, metavar="X",
                   help="--file: X times as fast as recorded, 0 for no waiting "
                        "(default 1 in the app, 0 with --json or --text)")
    p.add_argument("--replay", type=ENDPOINT, default=None, metavar="ENDPOINT",
                   help="the publisher's replay socket (SGLang's replay_endpoint): gaps are asked for again")
    p.add_argument("--topic", default="", metavar="T",
                   help="subscribe to topics starting with T (default: every topic)")
    p.add_argument("--ranks", type=int, default=1, metavar="N",
                   help="DP ranks: rank R is read on the endpoint's port + R (default 1)")
    p.add_argument("--wire", choices=WATCH_WIRES, default="auto",
                   help="how to read the batches: auto (default) tells each batch's wire by its shape; "
                        "9fbe6800a: SGLang of March 2026 (events as arrays); v0.5.23: SGLang v0.5.23 "
                        "(events as maps, with cache_salt, session_id, lora_name); vllm: vLLM's map batches")
    p.add_argument("--bind", action="store_true",
                   help="bind ENDPOINT instead of connecting (for a publisher that connects: "
                        "SGLang connects when its endpoint names a host, e.g. tcp://127.0.0.1:5557)")
    p.add_argument("--json", action="store_true", help="one JSON line per batch instead of the app")
    p.add_argument("--text", action="store_true", help="one line of figures per batch instead of the app")
    p.add_argument("--record", metavar="FILE", help="also write the raw frames, with arrival times, to FILE")
    p.add_argument("--exit-after", type=SECONDS, default=None, metavar="S", help="stop after S seconds")
    p.add_argument("--exit-after-idle", type=SECONDS, default=None, metavar="S",
                   help="stop once nothing has arrived for S seconds")
    p.add_argument("--batches", type=int, default=None, metavar="N", help="stop after N batches")
    p.add_argument("--max-frame-mb", type=float, default=DEFAULT_MAX_FRAME / 2 ** 20, metavar="MB",
                   help=f"skip payloads larger than this unread (default {DEFAULT_MAX_FRAME // 2 ** 20})")
    p.add_argument("--max-blocks", type=int, default=DEFAULT_MAX_BLOCKS, metavar="N",
                   help=f"blocks kept per rank; past it new ones are only counted (default {DEFAULT_MAX_BLOCKS:,})")
    p.add_argument("--tokenizer", metavar="FILE",
                   help="a tokenizer.json (Hugging Face tokenizers) to show the blocks' text in the app")
    p.set_defaults(func=watch)


def check_args(args: argparse.Namespace) -> None:
    if (args.endpoint is None) == (args.file is None):
        raise UsageError("give an ENDPOINT to listen to or --file FILE to play (one of the two)")
    if args.file is not None and (args.replay or args.record or args.bind or args.ranks != 1):
        raise UsageError("--file plays a recording: drop --replay, --record, --bind and --ranks")
    if args.file is None and args.speed is not None:
        raise UsageError("--speed is for --file")
    if args.json and args.text:
        raise UsageError("--json or --text, not both")
    if not 1 <= args.ranks <= 1024:
        raise UsageError("--ranks must be between 1 and 1024")
    if args.speed is not None and not args.speed >= 0:
        raise UsageError("--speed must be 0 or more")
    if args.batches is not None and args.batches < 1:
        raise UsageError("--batches must be 1 or more")
    if not (0 < args.max_frame_mb <= 256) or args.max_blocks < 1:
        raise UsageError("--max-frame-mb must be above 0 and at most 256, --max-blocks 1 or more")


def wire_of(args: argparse.Namespace) -> str | None:
    """The wire ``--wire`` names, None for auto."""
    return None if args.wire == "auto" else args.wire


def watch(args: argparse.Namespace) -> int:
    check_args(args)
    max_frame = int(args.max_frame_mb * 2 ** 20)
    if not (args.json or args.text):
        return watch_in_app(args, max_frame)
    out = LineWriter(args.json, args.batches)
    if args.file is not None:
        return play_file(args, out, max_frame)
    return listen(args, out, max_frame)


def watch_in_app(args: argparse.Namespace, max_frame: int) -> int:
    from radixviz.tui.watch_app import run_watch_app, token_decoder   # the app: Textual

    token_decoder(args.tokenizer)   # a bad tokenizer file: one line before the screen opens
    if args.file is not None:
        records = load_recording(args.file)
        return run_watch_app(args, core_for(records, max_frame, args.max_blocks, wire_of(args)), records=records)
    core = WatchCore(args.ranks, replay=args.replay is not None, max_frame=max_frame,
                     max_blocks=args.max_blocks, wire=wire_of(args))
    record_file = open_record(args)
    watcher = open_watcher(args, core, Recorder(record_file) if record_file else None)
    try:
        return run_watch_app(args, core, watcher=watcher)
    finally:
        watcher.close()
        if record_file is not None:
            record_file.close()


def open_record(args: argparse.Namespace):
    if not args.record:
        return None
    try:
        return open(args.record, "wb")
    except OSError as exc:
        raise UsageError(f"--record {args.record}: {exc.strerror or exc}") from None


def load_recording(path: str) -> list:
    """The records of a recording; UsageError for a file that is not one or is damaged."""
    try:
        return list(read_records(read_bytes(path, MAX_RECORDING)))
    except (ReadError, RecordingError) as exc:
        raise UsageError(f"{path}: {exc}") from None


def open_watcher(args: argparse.Namespace, core, recorder=None) -> Watcher:
    try:
        return Watcher(args.endpoint, args.replay, args.topic, args.ranks, bind=args.bind,
                       core=core, recorder=recorder)
    except zmq.ZMQError as exc:
        raise UsageError(f"cannot {'bind' if args.bind else 'connect'} {args.endpoint}: {exc}") from None


def play_file(args: argparse.Namespace, out, max_frame: int) -> int:
    records = load_recording(args.file)
    wires, given = recorded_wires(records)
    if wires:
        print(f"watch: {args.file} holds {' then '.join(WIRE_WORDS.get(w, w) for w in wires)}"
              + (" (as --wire said when it was recorded)" if given else ""), file=sys.stderr)
    core = core_for(records, max_frame, args.max_blocks, wire_of(args))
    out.attach(core)
    for _applied in play(core, records, speed=args.speed or 0.0):
        out.flush_log(core)
        if out.done:
            break
    out.flush_log(core)
    return unread_exit(core, len(records))


def unread_exit(core: WatchCore, arrived: int) -> int:
    """0, or 2 with a line on stderr when messages arrived and not one batch could be read
    (a stream of a wire it was told not to expect, or not a KV-event stream at all)."""
    if core.batches or not core.problems.bad_frames:
        return EXIT_OK
    print(f"watch: {arrived:,} messages came and none could be read as KV events "
          f"({core.problems.bad_frames:,} refused; the log above says why"
          + ("; try --wire auto)" if core.wire else ")"), file=sys.stderr)
    return EXIT_BAD_INPUT


def listen(args: argparse.Namespace, out, max_frame: int) -> int:
    core = WatchCore(args.ranks, replay=args.replay is not None, max_frame=max_frame,
                     max_blocks=args.max_blocks, wire=wire_of(args))
    out.attach(core)
    record_file = open_record(args)
    watcher = open_watcher(args, core, Recorder(record_file) if record_file else None)
    print(f"watching {', '.join(watcher.endpoints)}" + (f" (replay {args.replay})" if args.replay else ""),
          file=sys.stderr, flush=True)
    start = last = time.monotonic()
    received = 0
    try:
        while True:
            now = time.monotonic()
            if args.exit_after is not None and now - start >= args.exit_after:
                break
            if args.exit_after_idle is not None and now - last >= args.exit_after_idle:
                break
            watcher.poll(0.25)
            if watcher.received != received:   # idle counts from the last message *arrived*
                received, last = watcher.received, time.monotonic()
            out.flush_log(core)
            if out.done:
                break
    finally:
        watcher.close()
        out.flush_log(core)
        if record_file is not None:
            record_file.close()
    return unread_exit(core, watcher.received)


class LineWriter:
    """Prints a line per applied batch (JSON or figures) as it is applied, and the log's new
    lines on stderr."""

    def __init__(self, as_json: bool, limit: int | None):
        self.as_json, self.limit = as_json, limit
        self.printed_notes = 0
        self.batches = 0
        self.core: WatchCore | None = None

    def attach(self, core: WatchCore) -> None:
        self.core = core
        core.listeners.append(self.on_applied)

    @property
    def done(self) -> bool:
        return self.limit is not None and self.batches >= self.limit

    def on_applied(self, item) -> None:
        if self.done or self.core is None:
            return
        core = self.core
        self.flush_log(core)
        tree = core.tree(item.rank)
        if self.as_json:
            line = json.dumps({"seq": item.seq, "dp_rank": item.rank, "wire": item.message.wire,
                               "blocks": [block_json(b) for b in tree.sorted_blocks()],
                               "problems": core.problems.as_dict()})
        else:
            tiers = ", ".join(f"{tier_name(m)} {n:,} blocks {t:,} tokens"
                              for m, (n, t) in sorted(tree.tier_figures().items(), key=lambda x: tier_rank(x[0])))
            line = f"seq {item.seq} rank {item.rank}: {len(item.message.batch.events)} events; " \
                   f"{tiers or 'nothing held'}"
        print(line, flush=True)
        self.batches += 1

    def flush_log(self, core: WatchCore) -> None:
        for line in core.notes_since(self.printed_notes):
            print(f"watch: {line}", file=sys.stderr)
        self.printed_notes = core.notes
