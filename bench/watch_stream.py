"""``radixviz watch`` against a recorded stream played at its own pace: does the app keep up?

The recording (written to a temporary file, in watch --record's format) is a server's stream
as issue 52 measured it: ``--blocks`` blocks of one token (page size 1) in chains of
``--chain``, sent in two batches, then ``--batches`` batches of one block each at ``--rate``
a second. ``--comb N`` sends instead one batch describing a comb N levels deep (each block
with two children: a conversation that branches at every turn). The app plays it headless
(Textual's test driver) at speed 1, as ``radixviz watch --file REC`` does, and the bench
reads its screen:

- ``first_paint_s``: from the app's start (the recording starts playing with it) until the
  tree of the first batch is on screen; ``all_blocks_s``: until the figures count every block
  of the first two batches (or the comb's);
- ``key_s``: during the small batches, ← pressed until the screen shows the batch before;
- ``caught_up_s`` and ``lag_s``: when the app had taken the last batch, and how long after
  that batch was due (a watcher that keeps up lags by about one tick);
- ``peak_rss_mb``: the process's peak resident memory (torch is not loaded).

    python bench/watch_stream.py [--blocks 100000] [--chain 100] [--batches 3000] [--rate 1000]
    python bench/watch_stream.py --comb 3000

Prints one JSON document. Every wait has a limit (``--limit``): a figure the app never
reached is null.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from radixviz.tui.watch_app import WatchApp  # noqa: E402
from radixviz.wire.events import AllBlocksCleared, BlockStored  # noqa: E402
from radixviz.wire.messages import EventBatch, encode_message  # noqa: E402
from radixviz.wire.playback import core_for  # noqa: E402
from radixviz.wire.recording import MAGIC, Record, read_records  # noqa: E402


def comb(levels: int) -> list:
    """One batch describing a comb: a chain of ``a`` blocks, each with an ``X`` leaf too."""
    events: list = [AllBlocksCleared()]
    for level in range(1, levels + 1):
        events.append(BlockStored([level], level - 1 or None, [97], 1, None, "GPU"))
        events.append(BlockStored([10 ** 9 + level], level, [88], 1, None, "GPU"))
    return events


def chains(blocks: int, chain: int, first: int) -> list:
    """``blocks`` blocks in chains of ``chain``, numbered from ``first + 1``."""
    events, block = [], first
    for _ in range(blocks // chain):
        parent = None
        for _link in range(chain):
            block += 1
            events.append(BlockStored([block], parent, [block * 7 % 50_000], 1, None, "GPU"))
            parent = block
    return events


def stream_batches(args) -> list[tuple[float, list]]:
    """(when, events) of each batch of the stream to record."""
    if args.comb:
        return [(0.0, comb(args.comb))]
    first_half = chains(args.blocks // 2, args.chain, 0)
    halves = [first_half, chains(args.blocks // 2, args.chain, len(first_half))]
    out = [(0.0, [AllBlocksCleared()] + halves[0]), (0.0, halves[1])]
    block, parent = len(first_half) + len(halves[1]), None
    for index in range(args.batches):
        block += 1
        out.append((0.5 + index / args.rate, [BlockStored([block], parent, [5], 1, None, "GPU")]))
        parent = block
    return out


def write_recording(path: Path, batches: list) -> None:
    encoder = msgspec.msgpack.Encoder()
    with open(path, "wb") as out:
        out.write(MAGIC)
        for seq, (when, events) in enumerate(batches):
            frames = encode_message(b"kv-events", seq, EventBatch(when, events, 0))
            data = encoder.encode(Record(when, 0, "pub", frames))
            out.write(len(data).to_bytes(4, "big") + data)


def figures(app) -> str:
    try:
        return str(app.screen_.query_one("#figures").content)
    except Exception:  # noqa: BLE001 - not composed yet
        return ""


def gpu_blocks(app) -> int:
    """The blocks the figures count on the GPU (0 before they show any)."""
    found = re.search(r"\(GPU\): ([0-9,]+) blocks", figures(app))
    return int(found.group(1).replace(",", "")) if found else 0


async def until(pilot, check, limit: float, step: float = 0.01) -> float | None:
    """Seconds until ``check()`` holds, polling; None past ``limit``."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if check():
            return time.monotonic() - start
        await pilot.pause(step)
    return None


async def measure(args, records: list) -> dict:
    ns = argparse.Namespace(endpoint=None, file="bench", speed=1.0, tokenizer=None, exit_after=None,
                            exit_after_idle=None, batches=None, history_mb=None)
    app = WatchApp(ns, core_for(records), records=records)
    total = len(records)
    held = args.comb * 2 if args.comb else args.blocks
    out: dict = {}
    async with app.run_test(size=(120, 40)) as pilot:
        started = app.started   # the feeder starts when the app is mounted, just after this
        await until(pilot, lambda: gpu_blocks(app) > 0, args.limit, 0.002)
        out["first_paint_s"] = time.monotonic() - started if gpu_blocks(app) > 0 else None
        await until(pilot, lambda: gpu_blocks(app) >= held, args.limit)
        out["all_blocks_s"] = time.monotonic() - started if gpu_blocks(app) >= held else None
        if not args.comb and out["all_blocks_s"] is not None:
            await until(pilot, lambda: app.core.batches > total // 2, args.limit)
            await pilot.press("left")
            out["key_s"] = await until(pilot, lambda: "kept" in figures(app), args.limit, 0.002)
            await pilot.press("end")
        done = await until(pilot, lambda: app.core.batches >= total and not app.view.inbox, args.limit)
        out["batches_applied"] = app.core.batches
        out["caught_up_s"] = None if done is None else round(time.monotonic() - started, 3)
        due = records[-1].t
        out["lag_s"] = None if done is None else round(out["caught_up_s"] - due, 3)
        out["last_batch_due_s"] = due
        await until(pilot, lambda: f"seq {total - 1}" in figures(app), 2.0)
        out["shows_last_batch"] = f"seq {total - 1}" in figures(app)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=100_000)
    parser.add_argument("--chain", type=int, default=100)
    parser.add_argument("--batches", type=int, default=3_000)
    parser.add_argument("--rate", type=float, default=1_000.0)
    parser.add_argument("--comb", type=int, default=0, help="one batch: a comb this many levels deep")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds any one wait may take")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "stream.rvkv"
        write_recording(path, stream_batches(args))
        size = path.stat().st_size
        records = list(read_records(path.read_bytes()))
    result = asyncio.run(measure(args, records))
    print(json.dumps({"stream": {"blocks": args.blocks, "chain": args.chain, "batches": args.batches,
                                 "rate": args.rate, "comb": args.comb, "recording_bytes": size,
                                 "records": len(records)},
                      **result, "load": os.getloadavg()[0], "python": platform.python_version()}, indent=2))


if __name__ == "__main__":
    main()
