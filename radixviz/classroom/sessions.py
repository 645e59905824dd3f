"""A student's session: one websocket, one app process (``ServedApp``), from the place taken
to the app's end. Mixed into ClassroomServer, which provides the checks and the counts.

What a tab sends is bounded here: keystrokes (a message, and a rate: a flood would queue
millions of key events in the app and grow it by gigabytes), resizes (a few a second), the
terminal size (settings.SERVED_CAPS). An app that exits before its first frame, or draws
nothing in time, ends the session out loud (starts.py).
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from aiohttp import web

from radixviz.files import DISK_SHARE_ENV, excerpt
from radixviz.lessons.progress.places import ENV_VAR as DATA_DIR_ENV
from radixviz.settings import SERVED_CAPS, SERVED_ENV, SESSION_ENV

from .frames import Refusals, envelope
from .keepers import KeeperGone, attach, left_behind, sessions_folder
from .starts import APP_STOPPED, START_FAILED, could_not_start, stopped, watch_end, watch_start
from .textual_serve_adapter import ServedApp

if TYPE_CHECKING:
    from .students import Student
    from collections import Counter

    from .priority import SessionPriorities
    from .starts import StartFailures
    from .limits import DiskBudget
    from .students import Roster
    from .textual_serve_adapter import DownloadManager

MAX_KEYS = 4096           # characters in one keystroke message
KEYS_PER_SECOND = 400     # sustained keystroke characters a session takes (a paste is a burst)
RESIZE_EVERY = 0.25       # seconds between two terminal sizes passed on (the last one always is)
MAX_MESSAGE = 1 << 20      # bytes in one websocket message (a paste: its keys are cut to MAX_KEYS)

log = logging.getLogger("radixviz.serve")


class KeyBudget:
    """A token bucket of keystroke characters: ``MAX_KEYS`` at once, ``KEYS_PER_SECOND``
    after that. What is over the budget is dropped (no person types that fast)."""

    def __init__(self, burst: int = MAX_KEYS, rate: float = KEYS_PER_SECOND) -> None:
        self.burst, self.rate = burst, rate
        self.tokens, self.at = float(burst), time.monotonic()

    def take(self, wanted: int) -> int:
        """How many of ``wanted`` characters may pass now."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        allowed = min(wanted, int(self.tokens))
        self.tokens -= allowed
        return allowed


class SessionRoutes:
    """``/ws/{ticket}``: a session, within the class's caps, until its tab or its app ends."""

    if TYPE_CHECKING:   # what the server provides (declared for the type checker only)
        command: str
        debug: bool
        download_manager: DownloadManager
        roster: Roster
        max_sessions: int
        per_client: int
        per_student: int
        live: int
        live_by_client: Counter
        live_by_student: Counter
        open_sockets: dict[str, set]
        processes: set
        detached: dict
        detached_timeout: float
        priorities: SessionPriorities
        start_failures: StartFailures
        app_ends: StartFailures
        stopping: bool
        memory_mb: int
        confine_memory: bool
        last_keystroke: dict[str, float]
        budget: DiskBudget

        def client_of(self, request: web.Request) -> str: ...
        def student_of(self, request: web.Request): ...
        def host_allowed(self, request: web.Request) -> bool: ...
        def same_origin(self, request: web.Request) -> bool: ...
        def has_code(self, request: web.Request) -> bool: ...
        def take_ticket(self, ticket: str, student: str | None, client: str) -> bool: ...
        def is_full(self, student: str | None = None) -> bool: ...

    async def handle_session_socket(self, request: web.Request) -> web.StreamResponse:
        client = self.client_of(request)
        student = self.student_of(request)
        if not (self.host_allowed(request) and self.same_origin(request) and self.has_code(request)):
            log.warning("refused a websocket from another origin or host (%s)", client)
            return web.Response(status=403, text="refused: not this classroom's page")
        if not self.take_ticket(request.match_info["ticket"], student and student.id, client):
            return web.Response(status=403, text="refused: reload the page for a new session")
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=MAX_MESSAGE)
        await websocket.prepare(request)
        if self.is_full(student.id):
            await websocket.close(code=4001, message=f"The class is full ({self.max_sessions} sessions): "
                                                     "reload in a minute.".encode())
            return websocket
        # the cap follows the student (a room behind one proxy or NAT is one address);
        # the per-address one is a flood guard, high enough for a class
        if self.live_by_student[student.id] >= self.per_student:
            await websocket.close(code=4002, message=f"You already have {self.per_student} "
                                                     "sessions open: close one first.".encode())
            return websocket
        if self.live_by_client[client] >= self.per_client:
            await websocket.close(code=4002, message=f"This address already has {self.per_client} "
                                                     "sessions open: close one first.".encode())
            return websocket
        self.live += 1
        self.live_by_client[client] += 1
        self.live_by_student[student.id] += 1
        self.open_sockets.setdefault(student.id, set()).add(websocket)
        log.info("session opened (%d of %d)", self.live, self.max_sessions)
        try:
            await self._run_session(websocket, request, student)
        finally:
            mine = self.open_sockets.get(student.id, set())
            mine.discard(websocket)
            if not mine:
                self.open_sockets.pop(student.id, None)
            self.live -= 1
            for counts, key in ((self.live_by_client, client), (self.live_by_student, student.id)):
                counts[key] -= 1
                if not counts[key]:
                    del counts[key]
            log.info("session closed (%d of %d)", self.live, self.max_sessions)
        return websocket

    async def _run_session(self, websocket: web.WebSocketResponse, request: web.Request, student: Student) -> None:
        caps = SERVED_CAPS
        width = bounded_int(request.query.get("width"), 80, 20, caps.columns)
        height = bounded_int(request.query.get("height"), 24, 10, caps.rows)
        home = self.roster.home(student)
        service = ServedApp(
            self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
            close=websocket.close, download_manager=self.download_manager, debug=self.debug,
            student=student.id, env=self.app_environment(home), folder=sessions_folder(home),
            idle=self.detached_timeout, memory=(self.memory_mb << 20) if self.confine_memory else 0)
        try:
            try:
                await self._session(websocket, request, student, service, width, height)
            finally:                    # every way out: the tab closed, an error, a cancellation mid-start
                await service.stop()
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # noqa: BLE001 - one session's failure must not stop the class
            # one line: the traceback (with its locals: what the tab sent) only in debug mode
            if self.debug:
                log.exception(error)
            else:
                log.error("a session ended on an error: %s: %s", type(error).__name__, excerpt(str(error), 120)[1:-1])

    def app_environment(self, home) -> dict[str, str]:
        """What a session's app is told: its student's folder, that it is served, its memory
        budget (its caps follow from it) and one thread for torch and two malloc arenas: a
        pool of a few hundred slots gains nothing from more, and each thread reserves address
        space the budget counts (16 cores: 170 MB more than one)."""
        return {DATA_DIR_ENV: str(home), SERVED_ENV: "1", SESSION_ENV: str(self.memory_mb),
                DISK_SHARE_ENV: str(self.budget.share),
                "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"}

    async def _session(self, websocket: web.WebSocketResponse, request: web.Request, student: Student,
                       service: ServedApp, width: int, height: int) -> None:
        """The app started (or taken up again), watched, and fed the tab's messages until
        the tab or the app ends; the caller stops it, however this ends."""
        kept = await self._reattach(service, student, width, height)
        if kept is None:
            await service.start(width, height)
        process = service.process
        assert process is not None          # start() opened it, or a former front did
        self.processes = {p for p in self.processes if p.returncode is None} | {process}
        self.priorities.watch(process.pid)
        watch = asyncio.ensure_future(self._watch_start(websocket, service, student))
        ended = asyncio.ensure_future(self._watch_end(websocket, service, student))
        try:
            await self._session_messages(websocket, service, self.client_of(request), student.id)
        finally:
            watch.cancel()
            ended.cancel()          # before the app is stopped on purpose
            self.priorities.forget(process.pid)

    async def _reattach(self, service: ServedApp, student: Student, width: int, height: int) -> int | None:
        """The app a former front of this class left running for this student (it died, or
        was killed), if one is free: the tab goes on with it, where the student was. Its pid,
        or None (there is none: a fresh app is started, as ever)."""
        # only a former front's (``detached``, found at start, dropped once taken up): an app
        # this front started and is stopping (the tab closed, the student reloads) is still
        # ending, and must not be taken up again
        for sock in sorted(s for s, info in self.detached.items() if info.get("student") == student.id):
            try:
                attached = await attach(sock)
            except KeeperGone:          # it ended meanwhile (its files are removed), or is busy
                if sock not in left_behind(self.roster.home(student)):
                    self.detached.pop(sock, None)
                continue
            self.detached.pop(sock, None)
            await service.reattach(attached, width, height)
            log.info("a session went on with the app a former front left running")
            return attached.app_pid
        return None

    async def _watch_start(self, websocket: web.WebSocketResponse, service, student: Student) -> None:
        """An app that exits before its first frame, or draws nothing in time, ends the
        session out loud: the page shows why, the log says so once, the report marks it."""
        reason = await watch_start(service, service.task, self.memory_mb)
        if reason is None:
            return
        self.start_failures.record(student.id, reason)
        log.warning("a session could not start: %s", excerpt(reason, 120)[1:-1])
        process = service.process
        if process is not None and process.returncode is None:
            try:        # an app that hangs would never answer "quit": stopping it would wait for ever
                process.kill()
            except ProcessLookupError:
                pass
        await websocket.close(code=START_FAILED, message=could_not_start(reason))

    async def _watch_end(self, websocket: web.WebSocketResponse, service: ServedApp, student: Student) -> None:
        """An app that dies once started (killed, out of memory, an error) ends the session
        out loud: the page says so, the log says so once, the teacher's page marks it; the
        student's next visit starts a new app where their place was kept (starts.py)."""
        reason = await watch_end(service, self.memory_mb)
        if self.stopping:                        # the server ending its sessions, on its way out
            return
        if reason is None:                       # the student quit the app: the tab closes
            await websocket.close()
            return
        self.app_ends.record(student.id, reason)
        log.warning("a session's app stopped: %s", excerpt(reason, 120)[1:-1])
        await websocket.close(code=APP_STOPPED, message=stopped(reason))

    async def _session_messages(self, websocket: web.WebSocketResponse, service: ServedApp, client: str = "",
                                student: str = "") -> None:
        """What a tab sends: keys (at most MAX_KEYS characters a message; when the student
        last typed is noted for the report), a terminal size (within SERVED_CAPS), pings,
        focus; anything else is ignored."""
        caps, budget, pending = SERVED_CAPS, KeyBudget(), dict[str, tuple[int, int]]()
        refusals = Refusals(client)
        sizes = asyncio.ensure_future(self._pass_sizes(service, pending))
        try:
            async for message in websocket:
                read = envelope(message, refusals)     # None: dropped (logged once) or not for us
                if read is not None and read[0] == "stdin":
                    self.last_keystroke[student] = time.time()
                if read is not None:
                    await self._one_message(*read, service, websocket, budget, pending, caps)
        finally:
            sizes.cancel()
            refusals.summary()

    async def _one_message(self, kind: str, data: object, service: ServedApp, websocket: web.WebSocketResponse,
                           budget: KeyBudget, pending: dict, caps) -> None:
        if kind == "stdin" and isinstance(data, str):
            allowed = budget.take(min(len(data), MAX_KEYS))
            if allowed:
                await service.send_bytes(data[:allowed].encode("utf-8", "replace"))
        elif kind == "resize" and isinstance(data, dict):
            pending["size"] = (bounded_int(data.get("width"), 80, 20, caps.columns),
                               bounded_int(data.get("height"), 24, 10, caps.rows))
        elif kind == "ping" and isinstance(data, str) and len(data) <= 64:
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await service.blur()
        elif kind == "focus":
            await service.focus()

    async def _pass_sizes(self, service: ServedApp, pending: dict) -> None:
        """Pass the newest terminal size on, at most every RESIZE_EVERY seconds (a window
        being dragged sends dozens; each costs the app a whole repaint)."""
        while True:
            size = pending.pop("size", None)
            if size is not None:
                await service.set_terminal_size(*size)
            await asyncio.sleep(RESIZE_EVERY)


def bounded_int(text: str | None, default: int, low: int = -2**31, high: int = 2**31) -> int:
    try:
        value = int(str(text)[:12])
    except (TypeError, ValueError):
        return default
    return max(low, min(high, value))
