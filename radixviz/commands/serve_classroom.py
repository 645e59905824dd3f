"""The app in a browser for a room: textual-serve runs one app process per tab, up to a cap.
It starts app processes; it imports neither the engine nor the app.

Counting: a served page reserves a place (a ticket in its websocket address) until its
websocket connects and becomes a live session, or the ticket expires. When live sessions
and reservations fill every place, a new tab gets the "class is full" page at once instead
of a page whose session never starts.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import time
import uuid

from aiohttp import web
from textual_serve.server import Server

from .serve_pages import app_page, full_page

TICKET_SECONDS = 60       # a page whose websocket has not connected by then gives its place back
RETRY_SECONDS = 15        # how often the "class is full" page tries again

log = logging.getLogger("radixviz.serve")


class ClassroomServer(Server):
    """textual-serve's server with a session cap and pages that need no internet."""

    def __init__(self, command: str, *, host: str, port: int, max_sessions: int,
                 title: str = "radixviz", on_start=None):
        super().__init__(command, host=host, port=port, title=title)
        self.max_sessions = max_sessions
        self.live = 0
        self.tickets: dict[str, float] = {}
        self._on_start = on_start

    # ---------------------------------------------------------------- places

    def in_use(self) -> int:
        """Live sessions plus pages still connecting."""
        now = time.monotonic()
        self.tickets = {t: until for t, until in self.tickets.items() if until > now}
        return self.live + len(self.tickets)

    def is_full(self) -> bool:
        return self.in_use() >= self.max_sessions

    def _full(self) -> web.Response:
        return web.Response(status=503, content_type="text/html", headers={"Retry-After": str(RETRY_SECONDS)},
                            text=full_page(title=self.title, limit=self.max_sessions, retry=RETRY_SECONDS))

    # ---------------------------------------------------------------- routes

    async def _make_app(self) -> web.Application:
        app = web.Application()
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/ws/{ticket}", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.static("/static", self.statics_path, name="static"),
        ])
        app.on_startup.append(self.on_startup)
        return app

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if self.is_full():
            log.info("class full (%d of %d): turned a tab away", self.in_use(), self.max_sessions)
            return self._full()
        ticket = uuid.uuid4().hex
        self.tickets[ticket] = time.monotonic() + TICKET_SECONDS
        # addresses from the Host the browser used, so the page works on every interface
        scheme = "wss" if request.secure else "ws"
        font_size = _int(request.query.get("fontsize"), 16)
        return web.Response(content_type="text/html", text=app_page(
            title=self.title, static="/static/", websocket=f"{scheme}://{request.host}/ws/{ticket}",
            font_size=font_size))

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        ticket = request.match_info["ticket"]
        if self.tickets.pop(ticket, None) is None and self.is_full():
            return self._full()
        self.live += 1
        log.info("session opened (%d of %d in use)", self.in_use(), self.max_sessions)
        try:
            return await super().handle_websocket(request)
        finally:
            self.live -= 1
            log.info("session closed (%d of %d in use)", self.in_use(), self.max_sessions)

    def serve(self, debug: bool = False) -> None:
        """Serve until Ctrl+C; ``on_start`` runs once the port is bound (not before, so a port
        in use is not announced as served)."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.request_exit)
            except NotImplementedError:
                pass
        web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop,
                    print=lambda *_: self._on_start and self._on_start(), access_log=None)

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints its banner here; the classroom says its own line once bound."""


def _int(text, default: int) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default
