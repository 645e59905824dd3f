"""A recording played back through a fresh WatchCore, at a chosen speed.

The core gets the records in the order they arrived; the replay requests it makes are not
sent anywhere, because the replies it got live are in the recording, right after.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from .blocks import DEFAULT_MAX_BLOCKS
from .core import Applied, WatchCore
from .messages import DEFAULT_MAX_FRAME
from .recording import Record, recorded_wires


def core_for(records: list[Record], max_frame: int = DEFAULT_MAX_FRAME,
             max_blocks: int = DEFAULT_MAX_BLOCKS, wire: str | None = None) -> WatchCore:
    """A core with as many streams as the recording has, with replay when it used one,
    reading the wire ``wire`` names, else the one ``--wire`` gave when it was recorded, else
    each batch's own."""
    ranks = 1 + max((r.stream for r in records), default=0)
    replay = any(r.channel in ("replay", "timeout") for r in records)
    return WatchCore(ranks, replay=replay, max_frame=max_frame, max_blocks=max_blocks,
                     wire=wire or recorded_wires(records)[1])


def feed(core: WatchCore, record: Record) -> list[Applied]:
    if record.channel == "pub":
        return core.live(record.stream, record.frames)[0]
    if record.channel == "replay":
        return core.replayed(record.stream, record.frames)[0]
    if record.channel == "wire":
        return []   # the core tells the wire from the batches themselves (or core_for's)
    return core.finish_replay(record.stream, "gave no end (as recorded)")[0]


def play(core: WatchCore, records: list[Record], speed: float = 0.0,
         sleep: Callable[[float], None] = time.sleep) -> Iterator[list[Applied]]:
    """Feed ``records`` in order, waiting between them as they arrived divided by ``speed``
    (0: no waiting); yield what each applied."""
    last = records[0].t if records else 0.0
    for record in records:
        if speed > 0 and record.t > last:
            sleep((record.t - last) / speed)
        last = max(last, record.t)
        yield feed(core, record)
