"""CPU fairness between served sessions: a session that keeps a CPU busy is moved to the
lowest priority, so the sessions of students who only read and step keep answering.

Each session is its own process. Every second the server reads each one's CPU time from
``/proc`` (Linux); a session that used more than ``HOG_SHARE`` of one core over the last
``HOG_SECONDS`` has every one of its threads set to nice 19 (what a normal user may do; it
cannot be undone without privileges, so it lasts as long as the session). A session
loading torch (two seconds or so) stays below the threshold; a tab replaying its whole
history over and over does not. Elsewhere than Linux nothing is watched.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from pathlib import Path

HOG_SHARE = 0.5          # of one core, averaged over HOG_SECONDS
HOG_SECONDS = 8.0
LOWEST = 19
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

log = logging.getLogger("radixviz.serve")


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of process ``pid`` (all its threads), or None if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS    # utime, stime


def lower_priority(pid: int) -> int:
    """Set every thread of ``pid`` to the lowest priority; return how many were changed."""
    changed = 0
    try:
        tasks = [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return 0
    for tid in tasks:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, LOWEST)   # Linux: per thread
            changed += 1
        except OSError:
            pass
    return changed


class SessionPriorities:
    """Watches the sessions' processes and lowers the priority of those that hog a CPU."""

    def __init__(self, share: float = HOG_SHARE, seconds: float = HOG_SECONDS):
        self.share, self.seconds = share, seconds
        self.samples: dict[int, deque] = {}
        self.lowered: set[int] = set()
        self.enabled = Path("/proc/self/stat").exists() and hasattr(os, "setpriority")

    def watch(self, pid: int) -> None:
        if self.enabled:
            self.samples[pid] = deque()

    def forget(self, pid: int) -> None:
        self.samples.pop(pid, None)
        self.lowered.discard(pid)

    def check(self, now: float | None = None) -> list[int]:
        """Sample every session once; lower the hogs; return the pids lowered now."""
        now = time.monotonic() if now is None else now
        lowered = []
        for pid, window in list(self.samples.items()):
            used = cpu_seconds(pid)
            if used is None:
                continue
            window.append((now, used))
            while window and now - window[0][0] > self.seconds:
                window.popleft()
            if pid in self.lowered or now - window[0][0] < self.seconds * 0.75:
                continue
            share = (used - window[0][1]) / (now - window[0][0])
            if share > self.share and lower_priority(pid):
                self.lowered.add(pid)
                lowered.append(pid)
                log.info("a session used %.0f%% of a CPU for %.0f s: its priority is lowered", 100 * share,
                         now - window[0][0])
        return lowered

    async def run(self, every: float = 1.0) -> None:
        while self.enabled:
            self.check()
            await asyncio.sleep(every)
