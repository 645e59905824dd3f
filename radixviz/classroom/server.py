"""The app in a browser for a room: textual-serve runs one app process per tab, up to a cap.
It starts app processes; it imports neither the engine nor the app.

A tab is untrusted: anyone who can reach the port. So

- every request's Host must name this machine (a page on another site that rebinds its
  own name to this address is refused), and a websocket's or a form's Origin must be this
  server: a page on another origin cannot drive a session through a student's browser;
- off this computer (``--host`` other than loopback) a class code is required: it is in
  the link the teacher shares, and the page keeps it in a cookie;
- each student joins once by name; their cookie (or personal link) keys their own folder,
  where their session keeps its progress, autosaves and scripts (``RADIXVIZ_DATA_DIR``):
  the teacher's own files are never read or written on a student's behalf;
- a page load reserves nothing: it gets a ticket, single-use, bound to the student and
  the client that asked, valid for a minute. The place is taken when the websocket
  connects, within the class's cap and a cap per client;
- what a tab sends is bounded: keystrokes (a message, and a rate: a flood would queue
  millions of key events in the app and grow it by gigabytes), resizes (a few a second),
  the terminal size (settings.SERVED_CAPS);
- a session that keeps a CPU busy is confined to half of the cores until it calms down
  (``SessionPriorities``), so the others keep answering their keys: measured by
  bench/serve_load.py --worst.
"""
from __future__ import annotations

import asyncio
import ipaddress
import logging
import secrets
import signal
import socket
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from radixviz.settings import DEFAULT_SESSION_MB, session_caps

from .connections import ConnectionGuard, body_deadline, connection_caps, raise_file_limit, request_rate
from .connections import serve_forever
from .file_routes import MAX_UPLOAD, FileRoutes
from .guards import contain_errors, content_policy, protect, same_secret
from .logs import start_logging
from .keepers import IDLE_SECONDS, is_keeper, left_behind, stop_keeper, wait_gone
from .pages import app_page, full_page, page
from .priority import SessionPriorities
from .starts import StartFailures
from .limits import REQUESTS_PER_SECOND, DiskBudget, JoinLimiter, RequestRate
from .links import CLASS_COOKIE, STUDENT_COOKIE, LinkRoutes
from .students import DEFAULT_STUDENTS, KEY_DAYS, MAX_NAME, Roster, RosterError
from .sessions import SessionRoutes, bounded_int
from .teacher import TeacherRoutes
from .textual_serve_adapter import ClassroomDownloads, Server

TICKET_SECONDS = 60       # a page whose websocket has not connected by then must be reloaded
TICKETS_PER_CLIENT = 8    # a client's unused tickets beyond this (or twice --per-client) drop the oldest
RETRY_SECONDS = 15        # how often the "class is full" page tries again
JOINS_PER_MINUTE = 10     # joins one address may make in a minute (serve --joins-per-minute)
DISK_MB = 300             # the class folder's budget (serve --disk-mb), shared out by --max-students
COOKIE_SECONDS = 365 * 24 * 3600
LOOPBACK_NAMES = ("localhost", "localhost.localdomain")

log = logging.getLogger("radixviz.serve")


@dataclass
class Ticket:
    student: str
    client: str
    until: float


class ClassroomServer(SessionRoutes, TeacherRoutes, LinkRoutes, FileRoutes, Server):
    """textual-serve's server with students, a class code, checked origins and caps."""

    def __init__(self, command: str, *, host: str, port: int, max_sessions: int, class_dir: Path,
                 token: str | None = None, per_client: int = 3, allow_hosts=(), teacher_key: str | None = None,
                 title: str = "radixviz", on_start=None, max_students: int = DEFAULT_STUDENTS,
                 joins_per_minute: int = JOINS_PER_MINUTE, disk_mb: int = DISK_MB, key_days: int = KEY_DAYS,
                 per_student: int = 3, trust_proxy: str | None = None,
                 requests_per_second: float = REQUESTS_PER_SECOND, detached_timeout: float = IDLE_SECONDS,
                 memory_mb: int = DEFAULT_SESSION_MB, confine_memory: bool = True, lesson_dirs=()) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.max_sessions, self.per_client, self.token = max_sessions, per_client, token
        self.per_student, self.trust_proxy = per_student, trust_proxy
        self.roster = Roster(class_dir, max_students, key_days)
        self.joins = JoinLimiter(joins_per_minute)
        self.requests = RequestRate(requests_per_second)
        self.budget = DiskBudget(self.roster, disk_mb * 1_000_000, disk_mb * 1_000_000 // max_students)
        self.open_sockets: dict[str, set] = {}
        self._pending = {}
        self.processes: set = set()      # the sessions' apps (KeptApp) this front attached to
        # keepers a former front left running, not attached to now: socket -> their pids
        # (they count in the class's cap until they end or a student goes on with one)
        self.detached: dict[Path, dict] = {}
        self.detached_timeout = detached_timeout
        # each session's memory budget; the OS holds each app to it (RLIMIT_AS) unless the
        # apps use CUDA, which reserves far more address space than any budget
        self.memory_mb, self.confine_memory = memory_mb, confine_memory
        self.caps = session_caps(memory_mb)
        self.download_manager = ClassroomDownloads(self.caps)
        self.lesson_dirs = tuple(str(d) for d in lesson_dirs)     # the report names their lessons
        self.last_keystroke: dict[str, float] = {}                 # student id -> when (time.time())
        self.teacher_key = teacher_key or secrets.token_urlsafe(12)
        self.loopback = is_loopback(host)
        self.names = {n.lower() for n in (*LOOPBACK_NAMES, *allow_hosts, *machine_names())}
        self.live = 0
        self.live_by_client: Counter = Counter()
        self.live_by_student: Counter = Counter()
        self.tickets: dict[str, Ticket] = {}
        self.priorities = SessionPriorities()
        self.start_failures = StartFailures()
        self.app_ends = StartFailures(what="app stopped")     # died once started (issue 39)
        self.stopping = False
        self._on_start = on_start

    # ---------------------------------------------------------------- checks

    def host_allowed(self, request: web.Request) -> bool:
        """The Host header names this machine: an address (loopback only, when serving on
        loopback), ``localhost``, this machine's name or one given with --allow-host."""
        name = (urlsplit(f"//{request.host}").hostname or "").lower()
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return name in self.names and (not self.loopback or name in LOOPBACK_NAMES)
        return address.is_loopback or not self.loopback

    def same_origin(self, request: web.Request) -> bool:
        """The request comes from a page of this server (browsers always send Origin on a
        websocket and a form post; one missing is refused)."""
        origin = request.headers.get("Origin", "")
        parts = urlsplit(origin)
        # a browser also says where the request comes from: a page of another site, or of
        # another port of this host ("same-site"), is not this server's own page
        fetched_from = request.headers.get("Sec-Fetch-Site", "same-origin")
        return (parts.scheme in ("http", "https") and parts.netloc.lower() == request.host.lower()
                and fetched_from == "same-origin")

    def client_of(self, request: web.Request) -> str:
        """The client's address: the peer's, or, when the peer is the proxy named with
        --trust-proxy, the address that proxy put last in X-Forwarded-For (the one it saw;
        what comes before it is what the client claimed, never trusted)."""
        remote = request.remote or ""
        if self.trust_proxy is None or remote != self.trust_proxy:
            return remote
        forwarded = request.headers.get("X-Forwarded-For", "").split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(forwarded))
        except ValueError:
            return remote

    def has_code(self, request: web.Request) -> bool:
        if self.token is None:
            return True
        return same_secret(request.cookies.get(CLASS_COOKIE), self.token)

    def student_of(self, request: web.Request):
        return self.roster.get(request.cookies.get(STUDENT_COOKIE))

    def _refused(self, status: int, heading: str, message: str) -> web.Response:
        return web.Response(status=status, content_type="text/html",
                            text=page("refused", title=self.title, heading=heading, message=message))

    def _expired(self) -> web.Response:
        return self._refused(410, "This personal link has expired",
                             f"Personal links last {self.roster.key_days} days: ask your teacher for a new one.")

    def _gate(self, request: web.Request, *, post: bool = False) -> web.Response | None:
        """The refusal for a request from the wrong host, origin or without the class code."""
        if not self.host_allowed(request):
            return self._refused(421, "Not this server", "This address does not name the classroom server.")
        if post and not self.same_origin(request):
            return self._refused(403, "Refused", "This form was not sent from the classroom's own page.")
        if not self.has_code(request):
            return self._refused(403, "This class needs its link",
                                 "Open the address your teacher shared: it ends in ?class=… .")
        return None

    # ---------------------------------------------------------------- places

    def issue_ticket(self, student: str, client: str) -> str:
        """A single-use ticket for this student's page from this client (reserves nothing)."""
        now = time.monotonic()
        self.tickets = {t: k for t, k in self.tickets.items() if k.until > now}
        mine = sorted((k.until, t) for t, k in self.tickets.items() if k.client == client)
        keep = max(TICKETS_PER_CLIENT, 2 * self.per_client)   # they hold no place: only memory
        for _, old in mine[:max(0, len(mine) - keep + 1)]:
            del self.tickets[old]
        ticket = secrets.token_urlsafe(24)
        self.tickets[ticket] = Ticket(student, client, now + TICKET_SECONDS)
        return ticket

    def take_ticket(self, ticket: str, student: str | None, client: str) -> bool:
        """Use ``ticket`` up (whatever the outcome): True if it was issued to this student's
        page on this client and has not expired."""
        found = self.tickets.pop(ticket, None)
        return (found is not None and found.until > time.monotonic() and found.client == client
                and student is not None and same_secret(found.student, student))

    def is_full(self, student: str | None = None) -> bool:
        """No place for a new session; a student an app was left running for (by a former
        front) goes on with it, so it is not counted against them."""
        theirs = student is not None and any(info.get("student") == student for info in self.detached.values())
        return self.live + len(self.detached) - theirs >= self.max_sessions

    def _full(self) -> web.Response:
        return web.Response(status=503, content_type="text/html", headers={"Retry-After": str(RETRY_SECONDS)},
                            text=full_page(title=self.title, limit=self.max_sessions, retry=RETRY_SECONDS))

    # ---------------------------------------------------------------- routes

    async def make_app(self) -> web.Application:
        # errors contained around everything; the request rate first: a flooder's request
        # costs no body read
        limits = [contain_errors, request_rate(self.requests, self.client_of), body_deadline]
        app = web.Application(client_max_size=MAX_UPLOAD + 1024, middlewares=limits)
        app.on_response_prepare.append(protect)
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.post("/join", self.handle_join, name="join"),
            web.post("/link", self.handle_link_confirm, name="link"),
            web.get("/ws/{ticket}", self.handle_session_socket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.post("/upload", self.handle_upload, name="upload"),
            web.get("/teacher", self.handle_teacher, name="teacher"),
            web.get("/teacher.csv", self.handle_teacher_csv, name="teacher-csv"),
            web.post("/teacher/remove", self.handle_teacher_remove, name="teacher-remove"),
            web.post("/teacher/show", self.handle_teacher_show, name="teacher-show"),
            web.post("/teacher/new-link", self.handle_teacher_new_link, name="teacher-new-link"),
            web.static("/static", self.statics_path, name="static"),
            # the classroom's own scripts and style sheets (no inline ones: the page's policy)
            web.static("/assets", Path(__file__).with_name("static"), name="assets"),
        ])
        app.on_startup.append(self.on_startup)
        return app

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if not self.host_allowed(request):
            return self._refused(421, "Not this server", "This address does not name the classroom server.")
        query = request.query
        if "class" in query or "student" in query:
            return self._remember_link(request)
        refusal = self._gate(request)
        if refusal is not None:
            return refusal
        student = self.student_of(request)
        if student is None and self.roster.expired(request.cookies.get(STUDENT_COOKIE)):
            return self._expired()
        if student is None:
            return web.Response(content_type="text/html",
                                text=page("join", title=self.title, max_name=MAX_NAME, name="", error=""))
        if self.is_full(student.id):
            log.info("class full (%d of %d): turned a tab away", self.live, self.max_sessions)
            return self._full()
        ticket = self.issue_ticket(student.id, self.client_of(request))
        # addresses from the Host the browser used, so the page works on every interface
        scheme = "wss" if request.secure else "ws"
        policy = content_policy(request, inline_style=True)      # the terminal's own <style> elements
        return web.Response(content_type="text/html", headers={"Cache-Control": "no-store",
                                                               "Content-Security-Policy": policy}, text=app_page(
            title=self.title, static="/static/", websocket=f"{scheme}://{request.host}/ws/{ticket}",
            font_size=bounded_int(query.get("fontsize"), 16, 8, 40), student=student.name))

    def _cookie(self, response: web.StreamResponse, request: web.Request, name: str, value: str) -> None:
        # Lax: sent when the student follows the shared link, never with another site's
        # websocket or form (Strict would drop it when a student follows the class's link
        # from another site, an LMS page: they would be shown the join page again, though
        # joined; a link key never binds from another site, links.py); HttpOnly: no
        # script reads it
        response.set_cookie(name, value, max_age=COOKIE_SECONDS, httponly=True, samesite="Lax",
                            secure=request.secure, path="/")

    async def handle_join(self, request: web.Request) -> web.StreamResponse:
        refusal = self._gate(request, post=True)
        if refusal is not None:
            return refusal
        client = self.client_of(request)
        wait = self.joins.wait(client)
        if wait:
            log.info("refused a join: %s joined %d times in a minute", client, self.joins.per_minute)
            return web.Response(status=429, content_type="text/html", headers={"Retry-After": str(int(wait) + 1)},
                                text=page("join", title=self.title, max_name=MAX_NAME, name="", error=(
                                    f"Too many joins from this computer: try again in {int(wait) + 1} s.")))
        form = await request.post()
        typed = str(form.get("name", ""))[:200]
        try:
            student = await asyncio.get_running_loop().run_in_executor(None, self.roster.join, typed)
        except RosterError as exc:
            return web.Response(status=400, content_type="text/html", text=page(
                "join", title=self.title, max_name=MAX_NAME, name=typed[:MAX_NAME], error=str(exc)))
        log.info("a student joined (%d in the class)", len(self.roster.students()))
        link = f"{request.scheme}://{request.host}/?student={student.id}"
        if self.token is not None:
            link += f"&class={self.token}"
        response = web.Response(content_type="text/html",
                                text=page("welcome", title=self.title, name=student.name, link=link))
        self._cookie(response, request, STUDENT_COOKIE, student.id)
        return response

    # ---------------------------------------------------------------- running

    def serve(self, debug: bool = False) -> None:
        """Serve until Ctrl+C; ``on_start`` runs once the port is bound (not before, so a port
        in use is not announced as served). Connections are capped below the file limit
        (raised to the hard one first), per address too, and timed (connections)."""
        self.debug = debug
        logs = start_logging(debug)
        files = raise_file_limit()
        total, per_address = connection_caps(files, self.max_sessions, self.per_client)
        self.guard = ConnectionGuard(total, per_address)
        if self.trust_proxy is not None:
            self.guard.proxies.add(self.trust_proxy)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.request_exit)
            except NotImplementedError:
                pass
        app = loop.run_until_complete(self.make_app())
        app.on_shutdown.append(self._end_sessions)

        def started() -> None:
            if self._on_start is not None:
                self._on_start()        # the links first: a test or a teacher reads them from the top
            log.info("file limit %d: at most %d connections at once, %d per address", files, total, per_address)
        try:
            serve_forever(app, self.host, self.port, self.guard, loop, started)
        finally:
            logs.stop()         # the last lines written before the server exits

    async def _end_sessions(self, app: web.Application) -> None:
        """On the way out (the class ends): stop every keeper, this front's and those a
        former one left, so that no app outlives the class, and wait for them (bounded)."""
        self.stopping = True
        pids = [p.keeper_pid for p in self.processes] + [int(i["keeper"]) for i in self.detached.values()]
        for pid in pids:
            stop_keeper(pid)
        await wait_gone(pids)

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints its banner here; the classroom says its own lines once bound,
        counts the apps a former front left running, and starts watching the sessions' CPU use."""
        for student in self.roster.students():
            for sock, info in left_behind(self.roster.home(student)).items():
                self.detached[sock] = {**info, "student": student.id}
                self.priorities.watch(int(info["app"]))
        if self.detached:
            log.info("%d app(s) a former front left running: each student goes on with theirs", len(self.detached))
        app["priorities"] = asyncio.ensure_future(self.priorities.run())
        app["detached"] = asyncio.ensure_future(self._forget_ended())

    async def _forget_ended(self) -> None:
        """The keepers left behind that ended (their idle timeout, their app's end) free
        their place in the cap."""
        while True:
            await asyncio.sleep(2)
            for sock, info in list(self.detached.items()):
                if not is_keeper(int(info["keeper"])):
                    self.detached.pop(sock, None)
                    self.priorities.forget(int(info["app"]))


def is_loopback(host: str) -> bool:
    """Whether ``--host`` lets only this computer connect."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def machine_names() -> set:
    """This machine's own names, which a student's browser may use to reach it."""
    name = socket.gethostname()
    names = {name, f"{name}.local"}
    try:
        names.add(socket.getfqdn())
    except OSError:
        pass
    return {n for n in names if n}


def lan_address() -> str:
    """This machine's address on the room's network (for the link to share)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))   # a documentation address: nothing is sent
            return probe.getsockname()[0]
    except OSError:
        return socket.gethostname()
