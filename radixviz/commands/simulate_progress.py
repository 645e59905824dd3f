"""How far a long simulation is: one line on a terminal's stderr, rewritten in place.

Only when stderr is a terminal and the run is long (``LONG`` requests or more), so piped
output and ``--json`` stay clean; at most every ``EVERY`` seconds, so printing costs nothing
next to the run; the line is cleared when the run ends.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import sys
import time

if TYPE_CHECKING:
    from typing import TextIO

LONG = 2_000
EVERY = 0.5


class SimulationProgress:
    """``progress(finished, total)`` for ``sim.runner.replay``; ``done()`` clears the line."""

    def __init__(self, label: str, stream: TextIO | None = None):
        self.label, self.stream = label, stream or sys.stderr
        self.shown_at = float("-inf")   # the first pass is shown at once
        self.width = 0

    def __call__(self, finished: int, total: int) -> None:
        now = time.monotonic()
        if now - self.shown_at < EVERY:
            return
        self.shown_at = now
        line = f"simulating {self.label}: {finished:,} of {total:,} requests finished ({finished / max(total, 1):.0%})"
        self.width = max(self.width, len(line))
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()

    def done(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def progress_for(label: str, total: int, stream: TextIO | None = None) -> SimulationProgress | None:
    """A progress line for a run of ``total`` requests, or None (a short run, or stderr is
    not a terminal)."""
    stream = stream or sys.stderr
    if total < LONG or not stream.isatty():
        return None
    return SimulationProgress(label, stream)
