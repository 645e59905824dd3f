"""CPU fairness between served sessions: a session that keeps a CPU busy is confined to
half of the machine's cores until it calms down, so the sessions of students who read and
step keep the other half and answer their keys at once.

Each session is its own process. Twice a second the server reads, for each one's main
thread (where the app does its work), how long it ran or waited to run (``schedstat`` in
``/proc``, Linux). A session busy more than ``BUSY`` of the time over the last ``WINDOW``
seconds is confined (every thread's CPU affinity set to the hog cores); once it has been
busy less than ``CALM`` of the time over a window, it gets every core back. Affinity, unlike
a lower priority, can be given back by the same unprivileged user, so a session loading
torch is confined for a few seconds at most and then runs as before.

A session still busy after ``STUBBORN`` seconds of confinement is no student's reading or
stepping (the longest legitimate burst, an "export all" of 300 steps, takes less): its
threads also get the lowest priority, nice 19, for the rest of its life (an unprivileged
user cannot raise it back). Elsewhere than Linux, or with one core, nothing is done.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

BUSY = 0.6           # of the window's wall time spent running or waiting to run
CALM = 0.2
WINDOW = 5.0         # seconds
EVERY = 0.5
STUBBORN = 30.0      # seconds confined and still busy before the priority is lowered for good
LOWEST = 19

log = logging.getLogger("radixviz.serve")


def busy_seconds(pid: int) -> float | None:
    """Seconds the main thread of ``pid`` has run plus waited to run, or None if gone."""
    try:
        ran, waited, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return None
    return (int(ran) + int(waited)) / 1e9


def lower_priority(pid: int) -> bool:
    """Every thread of ``pid`` to nice 19 (Linux sets it per thread); True if any moved."""
    return _each_thread(pid, lambda tid: os.setpriority(os.PRIO_PROCESS, tid, LOWEST))


def _each_thread(pid: int, change: Callable[[int], object]) -> bool:
    try:
        tasks = [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return False
    done = False
    for tid in tasks:
        try:
            change(tid)
            done = True
        except OSError:
            pass
    return done


def set_cores(pid: int, cores: set) -> bool:
    """Put every thread of ``pid`` on ``cores``; True if any was moved."""
    return _each_thread(pid, lambda tid: os.sched_setaffinity(tid, cores))


class SessionPriorities:
    """Watches the sessions' processes; confines the busy ones to the hog cores."""

    def __init__(self, busy: float = BUSY, calm: float = CALM, window: float = WINDOW) -> None:
        self.busy, self.calm, self.window = busy, calm, window
        self.samples: dict[int, deque] = {}
        self.confined: dict[int, float] = {}    # pid -> when it was confined
        self.lowered: set[int] = set()
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self.all_cores = set(cores)
        self.hog_cores = set(cores[len(cores) // 2:])
        self.enabled = len(cores) > 1 and Path("/proc/self/schedstat").exists()

    def watch(self, pid: int) -> None:
        """Watch ``pid`` from now on; one a former front confined, or lowered, stays so (the
        kernel kept its cores and priority: a front that restarts takes its state from there)."""
        if not self.enabled:
            return
        self.samples[pid] = deque()
        try:
            if os.sched_getaffinity(pid) != self.all_cores:
                self.confined.setdefault(pid, time.monotonic())
            if os.getpriority(os.PRIO_PROCESS, pid) >= LOWEST:
                self.lowered.add(pid)
        except OSError:
            pass

    def forget(self, pid: int) -> None:
        self.samples.pop(pid, None)
        self.confined.pop(pid, None)
        self.lowered.discard(pid)

    def check(self, now: float | None = None) -> tuple[list, list]:
        """Sample every session once; return (pids confined now, pids given back)."""
        now = time.monotonic() if now is None else now
        confined, released = [], []
        for pid, window in list(self.samples.items()):
            busy = busy_seconds(pid)
            if busy is None:
                continue
            window.append((now, busy))
            while now - window[0][0] > self.window:
                window.popleft()
            span = now - window[0][0]
            if span < self.window * 0.8:
                continue
            share = (busy - window[0][1]) / span
            if pid not in self.confined and share > self.busy and set_cores(pid, self.hog_cores):
                self.confined[pid] = now
                confined.append(pid)
                log.info("a session was busy %.0f%% of %.0f s: it shares cores %s with the other busy ones",
                         100 * share, span, ",".join(map(str, sorted(self.hog_cores))))
            elif pid in self.confined and share < self.calm and set_cores(pid, self.all_cores):
                del self.confined[pid]
                released.append(pid)
            elif (pid in self.confined and pid not in self.lowered and now - self.confined[pid] > STUBBORN
                  and lower_priority(pid)):
                self.lowered.add(pid)
                log.info("a session has been busy for %.0f s: its priority is lowered for good",
                         now - self.confined[pid])
        return confined, released

    async def run(self) -> None:
        while self.enabled:
            self.check()
            await asyncio.sleep(EVERY)
