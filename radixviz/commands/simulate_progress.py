"""How far a long simulation is: one line on a terminal's stderr (Rich's progress display),
with the requests finished, their rate and the process's memory.

Only when stderr is a terminal, so piped output and ``--json`` stay clean; only once a run
has gone on for ``AFTER`` seconds, so a short run prints nothing; redrawn at most every
``EVERY`` seconds, so it costs nothing next to the run; cleared when the run ends.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import os
import resource
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:
    from typing import TextIO

AFTER = 2.0     # seconds a run goes on before its line appears
EVERY = 0.5     # seconds between redraws


def resident_mb() -> float:
    """This process's resident memory now (Linux), else its peak, in MB."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 1024


class SimulationProgress:
    """``progress(finished, total)`` for ``sim.runner.replay``; ``done()`` clears the line."""

    def __init__(self, label: str, stream: TextIO | None = None):
        self.label = label
        self.console = Console(file=stream or sys.stderr, highlight=False)
        self.progress = Progress(
            TextColumn("simulating {task.description}:"), BarColumn(bar_width=20),
            TextColumn("{task.completed:,} of {task.total:,} requests finished · {task.fields[rate]} · "
                       "{task.fields[memory]}"),
            TimeElapsedColumn(), console=self.console, transient=True, auto_refresh=False)
        self.task = self.progress.add_task(label, total=1, rate="", memory="")
        self.started = time.monotonic()
        self.shown_at = float("-inf")
        self.showing = False

    def __call__(self, finished: int, total: int) -> None:
        now = time.monotonic()
        if now - self.shown_at < EVERY or now - self.started < AFTER:
            return
        self.shown_at = now
        if not self.showing:
            self.progress.start()
            self.showing = True
        rate = finished / max(now - self.started, 1e-9)
        self.progress.update(self.task, completed=finished, total=max(total, 1),
                             rate=f"{rate:,.0f} requests/s", memory=f"{resident_mb():,.0f} MB")
        self.progress.refresh()

    def done(self) -> None:
        if self.showing:
            self.progress.stop()
            self.showing = False


def progress_for(label: str, total: int, stream: TextIO | None = None) -> SimulationProgress | None:
    """A progress line for a run of ``total`` requests that shows once the run is long, or
    None when stderr is not a terminal."""
    stream = stream or sys.stderr
    if not stream.isatty():
        return None
    return SimulationProgress(label, stream)
