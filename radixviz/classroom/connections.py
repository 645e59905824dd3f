"""The HTTP front of the classroom never dies of its clients: a flood of connections, each a
half-sent request, costs one log line, not the class.

- The file limit: the soft ``RLIMIT_NOFILE`` is raised to the hard one at start (a desktop's
  soft 1,024 is often under a hard 4,096 or more), and connections are capped below it,
  keeping a reserve for the server's own files, each session's app process (its pipes) and
  the burst asyncio accepts at once before any is counted (the listen backlog):
  ``connection_caps``. Past the cap, a new connection is answered 503 and closed at once.
- One address holds at most ``per_address`` connections (a student's tabs need a few each).
- A connection must send its request's headers within ``HEADER_SECONDS`` (aiohttp's
  keep-alive timer, which runs from the connection's start, also closes idle ones), and a
  request its body within ``BODY_SECONDS``: a slowloris holds a place for seconds, not forever.
- One address makes at most ``serve --requests-per-second`` HTTP requests a second after a
  burst (``limits.RequestRate``): past it, ``429`` with Retry-After, and the connection closes.
- If ``accept`` still fails for want of file descriptors (EMFILE, ENFILE: something else
  took them), asyncio stops accepting for a second and tries again; the loop's exception
  handler here says so in one line, once until accepting works again, and never raises.
  (Before, it logged through Rich, which imports a module to draw a traceback: opening that
  file failed with EMFILE too, the error escaped the loop, and the server exited.)
"""
from __future__ import annotations

import asyncio
import errno
import logging
import resource
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import rich.traceback  # noqa: F401 - loaded now: Rich's log handler imports it to draw a traceback, which needs a free file
from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from .limits import RequestRate, address_key

log = logging.getLogger("radixviz.serve")

RESERVE = 64                # descriptors the server keeps for itself (its socket, logs, files it reads)
BACKLOG = 64                # connections the kernel queues; asyncio accepts up to this many at once,
                            # before the guard sees any: they are reserved too
PER_SESSION = 6             # a session's app process beyond its websocket: 3 pipes, its watcher, spare
MAX_CONNECTIONS = 4096      # whatever the file limit: each costs memory
MIN_CONNECTIONS = 16
PER_ADDRESS = 32            # connections one address may hold (or 4 per session it may hold, if more)
HEADER_SECONDS = 20.0       # over aiohttp clients' own 15 s keep-alive, so an idle one closes first
BODY_SECONDS = 30.0
OUT_OF_FILES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
FULL = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\nRetry-After: 5\r\n\r\n"


def raise_file_limit() -> int:
    """Raise the soft limit on open files to the hard one; the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if wanted > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft


def connection_caps(file_limit: int, max_sessions: int, per_client: int) -> tuple[int, int]:
    """(connections at once, connections per address) for this file limit and class."""
    total = file_limit - RESERVE - BACKLOG - PER_SESSION * max_sessions
    if total < MIN_CONNECTIONS:
        log.warning("the file limit (%d) is low for %d sessions: raise it (ulimit -n) or lower --max-sessions",
                    file_limit, max_sessions)
    total = max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, total))
    return total, min(total, max(PER_ADDRESS, 4 * per_client))


class ConnectionGuard:
    """Counts the open connections, in all and per address; says which to turn away."""

    def __init__(self, total: int, per_address: int) -> None:
        self.total, self.per_address = total, per_address
        self.proxies: set[str] = set()
        self.open = 0
        self.by_address: Counter = Counter()
        self.turned_away = 0          # since the last log line about it
        self.logged_at = -1.0          # when the last line about turned-away connections was logged
        self.out_of_files = 0         # accept's failures since the last connection it took

    def admit(self, address: str) -> bool:
        """Count a new connection from ``address``; False (uncounted) if over a cap."""
        if self.out_of_files:
            log.warning("accepting connections again (after %d refusals for want of files)", self.out_of_files)
            self.out_of_files = 0
        key = address_key(address)
        # a trusted proxy (serve --trust-proxy) carries the whole room: only the total caps it
        if self.open >= self.total or (self.by_address[key] >= self.per_address and address not in self.proxies):
            self._turned_away(key)
            return False
        self.open += 1
        self.by_address[key] += 1
        return True

    def release(self, address: str) -> None:
        key = address_key(address)
        self.open -= 1
        self.by_address[key] -= 1
        if self.by_address[key] <= 0:
            del self.by_address[key]

    def _turned_away(self, key: str) -> None:
        self.turned_away += 1
        now = time.monotonic()
        if self.logged_at < 0 or now - self.logged_at >= 60:        # one line a minute, however many
            full = "the server holds" if self.open >= self.total else f"{key} holds"
            log.warning("turned away %d connection(s)%s: %s the most allowed (%d in all, %d per address)",
                        self.turned_away, "" if self.logged_at < 0 else " in the last minute", full,
                        self.total, self.per_address)
            self.turned_away, self.logged_at = 0, now

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """The event loop's exception handler: one line, never a traceback, never raising."""
        try:
            error = context.get("exception")
            if isinstance(error, OSError) and error.errno in OUT_OF_FILES:
                self.out_of_files += 1
                if self.out_of_files == 1:
                    log.warning("out of file descriptors (%s): not accepting for a second at a time until "
                                "some close; the sessions go on", errno.errorcode.get(error.errno, error.errno))
                return
            log.error("%s%s", context.get("message", "error in the event loop"),
                      f": {type(error).__name__}: {str(error)[:200]}" if error else "")
        except Exception:  # noqa: BLE001 - a handler that raises would stop the loop, the class with it
            pass


class GuardedHandler(RequestHandler):
    """aiohttp's connection handler, counted by the guard (or answered 503 and closed)."""

    def __init__(self, manager, guard: ConnectionGuard, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self.guard, self.address, self.counted = guard, "", False

    def connection_made(self, transport) -> None:
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        self.counted = self.guard.admit(self.address)
        super().connection_made(transport)
        if not self.counted:
            transport.write(FULL)
            transport.close()

    def connection_lost(self, exc: BaseException | None) -> None:
        if self.counted:
            self.counted = False
            self.guard.release(self.address)
        super().connection_lost(exc)


@web.middleware
async def body_deadline(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
    """A request's body in ``BODY_SECONDS`` (read here, kept for the handler), or 408."""
    if request.body_exists and request.method in ("POST", "PUT", "PATCH"):
        try:
            await asyncio.wait_for(request.read(), BODY_SECONDS)
        except asyncio.TimeoutError:
            log.info("closed a request from %s: its body did not come within %.0f s", request.remote, BODY_SECONDS)
            return web.Response(status=408, text="the request's body came too slowly", headers={"Connection": "close"})
        except web.HTTPRequestEntityTooLarge:
            return web.Response(status=413, text="not taken: the request is too large")
    return await handler(request)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def request_rate(rate: RequestRate, client_of: Callable[[web.Request], str]):
    """The middleware that counts every request against its client's bucket (``client_of``:
    the peer, or the address a trusted proxy forwarded) and answers 429 past it; one log
    line a minute, however many are refused."""
    refused = {"count": 0, "at": -1.0}

    @web.middleware
    async def limit(request: web.Request, handler: Handler) -> web.StreamResponse:
        client = client_of(request)
        wait = rate.wait(client)
        if not wait:
            return await handler(request)
        refused["count"] += 1
        now = time.monotonic()
        if refused["at"] < 0 or now - refused["at"] >= 60:
            log.warning("refused %d request(s)%s: %s asked more than %g a second (after a burst of %d)",
                        refused["count"], "" if refused["at"] < 0 else " in the last minute",
                        address_key(client), rate.per_second, rate.burst)
            refused["count"], refused["at"] = 0, now
        response = web.Response(status=429, text="too many requests from this address: wait a moment",
                                headers={"Retry-After": str(max(1, int(wait + 0.999)))})
        response.force_close()       # a flood on one kept-alive connection has to connect again
        return response

    return limit


def serve_forever(app: web.Application, host: str, port: int, guard: ConnectionGuard,
                  loop: asyncio.AbstractEventLoop, on_start: Callable[[], object] | None) -> None:
    """Run ``app`` on ``host:port`` behind ``guard`` until GracefulExit (Ctrl+C); OSError
    if the port cannot be bound. ``on_start`` runs once it is."""
    handler_options: dict[str, Any] = {"keepalive_timeout": HEADER_SECONDS, "access_log": None}
    runner = web.AppRunner(app, handle_signals=False, **handler_options)
    listening = None
    loop.set_exception_handler(guard.loop_exception)
    try:
        loop.run_until_complete(runner.setup())
        listening = loop.run_until_complete(loop.create_server(
            lambda: GuardedHandler(runner.server, guard, loop=loop, **handler_options),
            host, port, reuse_address=True, backlog=BACKLOG))
        if on_start is not None:
            on_start()
        loop.run_forever()
    except (web.GracefulExit, KeyboardInterrupt):
        pass
    finally:
        if listening is not None:
            listening.close()
        loop.run_until_complete(runner.cleanup())
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()
