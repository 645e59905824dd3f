"""Python's cycle collector paused while a large batch is decoded, applied or drawn.

A batch of 100,000 blocks makes about half a million objects, none of them in a cycle; the
collector, run every 700 new objects, walked them again and again as they came (and the
whole heap each time it grew by a quarter): half the time of applying such a batch
(docs/benchmarks.md). Paused only while the batch is handled, and by whichever of the two
threads (the feeder, the screen) paused it first, so it always runs again afterwards.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

LARGE_PAYLOAD = 1 << 16   # bytes: a batch past this is handled with the collector paused


@contextmanager
def collector_paused(pause: bool = True) -> Iterator[None]:
    """Run the block with the collector off when ``pause`` (and it was on), then on again."""
    paused = pause and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
