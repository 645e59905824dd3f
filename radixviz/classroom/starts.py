"""A session that cannot start, or whose app dies, says so (issues 41, 39): before, an app process that exited at
start (a broken install, a full disk, a missing dependency) left the tab on "starting your
session…" for ever, with nothing on the teacher's report.

Now the server watches each session's start: if its app exits before its first frame, or
draws nothing within START_SECONDS, the websocket is closed with a message the page shows
("radixviz could not start: <the app's last error line>. Reload to try again."), one line
is logged, and the teacher's report marks the student ("could not start 2× in the last
10 min"). The app's stderr is kept (its last few kB) for that line, not echoed to the
server's output as textual-serve does.

An app that dies later (killed: out of memory, a signal; or exiting on an error) ends its
session the same way: the page says "Your session stopped (…): reload to go on", one line
is logged, the teacher's page marks the student ("app stopped 1× in the last 10 min"), and
the student's next visit starts a new app in their own folder, where the place was kept as
they went: a lesson's block is saved at each block (opening it offers "Resume at block N"),
the sandbox's operations at each change (opening it offers "Unsaved work found").
"""
from __future__ import annotations

import asyncio
import signal
import time
from collections import deque
from typing import TYPE_CHECKING

from radixviz.files import strip_controls

if TYPE_CHECKING:
    from collections.abc import Callable
    from .textual_serve_adapter import ServedApp

START_SECONDS = 20          # a session's app has this long to draw its first frame
FAILURE_WINDOW = 600        # the report counts failed starts over the last 10 minutes
MAX_REASON = 123            # bytes in a websocket close reason (RFC 6455: 125 less the code)
START_FAILED = 4004         # the close code of a session that could not start
APP_STOPPED = 4006          # the close code of a session whose app died


def last_error_line(stderr: bytes) -> str:
    """The app's last non-blank line of stderr (a traceback's last line is its error)."""
    lines = [strip_controls(line).strip() for line in stderr.decode("utf-8", "replace").splitlines()]
    return next((line for line in reversed(lines) if line), "")


def could_not_start(reason: str) -> bytes:
    """The close message the page shows, within a close frame's 123 bytes."""
    head, tail = "radixviz could not start: ", ". Reload to try again."
    room = MAX_REASON - len((head + tail).encode())
    cut = reason.rstrip(".")
    if len(cut.encode()) > room:
        cut = cut.encode()[:room - 3].decode("utf-8", "ignore") + "…"
    return (head + cut + tail).encode()


async def watch_start(service: ServedApp, task: asyncio.Future, memory_mb: int = 0) -> str | None:
    """None once the app draws its first frame; else why it did not (it exited, with its
    last error line; or it drew nothing within START_SECONDS)."""
    drew = asyncio.ensure_future(service.drew.wait())
    try:
        await asyncio.wait({drew, task}, timeout=START_SECONDS, return_when=asyncio.FIRST_COMPLETED)
    finally:
        drew.cancel()
    if service.drew.is_set():
        return None
    if not task.done():
        return f"it drew nothing within {START_SECONDS} s"
    process = service.process
    code = None
    if process is not None:
        try:
            code = await asyncio.wait_for(process.wait(), 5)
        except asyncio.TimeoutError:
            pass
    if memory_mb and any(mark in service.stderr_tail for mark in OUT_OF_MEMORY):
        return f"it needs more memory than the {memory_mb:,} MB a session has here"
    return last_error_line(service.stderr_tail) or f"the app exited with code {code}"


def stopped(reason: str) -> bytes:
    """The close message of a session whose app died, within a close frame's 123 bytes."""
    head, tail = "Your session stopped (", "). Reload: your place is kept."
    room = MAX_REASON - len((head + tail).encode())
    cut = reason if len(reason.encode()) <= room else reason.encode()[:room - 3].decode("utf-8", "ignore") + "…"
    return (head + cut + tail).encode()


# what an app writes when an allocation fails under its address-space limit: Python's, C++'s
# (torch's own code, before it aborts) and torch's allocator's
OUT_OF_MEMORY = (b"MemoryError", b"std::bad_alloc", b"can't allocate memory", b"Cannot allocate memory")


def how_it_ended(code: int | None, stderr: bytes, memory_mb: int = 0) -> str:
    """"killed by SIGKILL", "exited with code 1: ValueError: …" (its last error line), or,
    when its stderr says an allocation failed, that it went past its ``memory_mb`` budget."""
    if memory_mb and any(mark in stderr for mark in OUT_OF_MEMORY):
        return f"it went past its memory budget of {memory_mb:,} MB"
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    if code is None:
        return "its keeper ended"            # SIGKILLed: the app ended with it
    line = last_error_line(stderr)
    return f"exited with code {code}" + (f": {line}" if line else "")


async def watch_end(service: ServedApp, memory_mb: int = 0) -> str | None:
    """Once the app has drawn, wait for it to end by itself: None if it quit (code 0: the
    app said goodbye), else how it died. Cancel it before stopping the app on purpose."""
    await service.drew.wait()
    task, process = service.task, service.process
    if task is None or process is None:
        return None
    await asyncio.wait({task})              # the app's stdout closed: it is ending (not cancelled)
    try:
        code = await asyncio.wait_for(process.wait(), 5)
    except asyncio.TimeoutError:            # stdout closed, still running: no longer an app
        process.kill()
        code = await process.wait()
    return None if code == 0 else how_it_ended(code, service.stderr_tail, memory_mb)


class StartFailures:
    """When each student's sessions could not start (or, ``what``, their apps stopped),
    over the last FAILURE_WINDOW seconds, and why the last one did."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, what: str = "could not start") -> None:
        self.clock, self.what = clock, what
        self.times: dict[str, deque] = {}
        self.last_reason: dict[str, str] = {}

    def record(self, student: str, reason: str = "") -> None:
        self.times.setdefault(student, deque(maxlen=100)).append(self.clock())
        self.last_reason[student] = reason

    def recent(self, student: str) -> int:
        now, times = self.clock(), self.times.get(student, ())
        return sum(1 for at in times if now - at <= FAILURE_WINDOW)

    def note(self, student: str) -> str:
        """The report's mark: "could not start 2× in the last 10 min", or "" (the last
        reason follows, when one was given: "app stopped 1× in the last 10 min: it went
        past its memory budget of 2,560 MB")."""
        count = self.recent(student)
        if not count:
            return ""
        reason = self.last_reason.get(student, "")
        return f"{self.what} {count}× in the last {FAILURE_WINDOW // 60} min" + (f": {reason}" if reason else "")
