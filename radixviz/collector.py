"""Python's cycle collector held back while radixviz makes many objects that form no cycles.

Three places make objects by the hundred thousand, none of them in a cycle, and the collector
walked them again and again as they came (docs/benchmarks.md measures each): a large batch of
KV events decoded, applied or drawn (``watch``: paused while the batch is handled); an
operation on a deep path, which records thousands of frames (the sandbox: young passes
rarer); a long trace replay (full collections rarer). Each is undone when its block ends, so
the collector always runs as before afterwards.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(pause: bool = True) -> Iterator[None]:
    """Run the block with the collector off when ``pause`` (and it was on), then on again;
    by whichever of two threads (the feeder, the screen) paused it first."""
    paused = pause and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


@contextmanager
def fewer_collections(young: int = 0, full: int = 0) -> Iterator[None]:
    """Run the block with at least ``young`` allocations between young passes and at least
    ``full`` young passes between full ones (the collector's first and third thresholds),
    then with the thresholds as they were."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], young), before[1], max(before[2], full))
    try:
        yield
    finally:
        gc.set_threshold(*before)
