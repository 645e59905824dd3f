"""What every request of the classroom goes through, whatever it asks (issue 53).

- Secrets are compared as bytes (``same_secret``): ``secrets.compare_digest`` raises
  TypeError for a text holding anything but ASCII, so ``/teacher?key=%C3%A9`` (or such a
  class code or cookie) answered 500 with a traceback, drawn on the event loop while every
  other student waited. Any bytes now compare, and a wrong one is simply wrong.
- A handler that fails anyway is answered 500 and logged in one line (``contain_errors``):
  never a traceback, with its locals, from a request anyone can send.
- Every response carries the page's protective headers (``protect``): a Content-Security-Policy
  that runs only this server's own scripts (no inline script), connects only back to this
  server (its websocket included) and lets no page frame it; X-Frame-Options DENY for the
  browsers that predate ``frame-ancestors``; nosniff; and a Referrer-Policy that keeps the
  Origin header a same-origin check reads.
"""
from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from radixviz.errors import excerpt

log = logging.getLogger("radixviz.serve")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def same_secret(given: str | bytes | None, secret: str) -> bool:
    """Whether ``given`` is ``secret``, in time that does not depend on where they differ;
    any text compares (as UTF-8, a lone surrogate included), none raises."""
    if given is None:
        return False
    if isinstance(given, str):
        given = given.encode("utf-8", "surrogatepass")
    return hmac.compare_digest(given, secret.encode("utf-8", "surrogatepass"))


def content_policy(request: web.Request, inline_style: bool = False) -> str:
    """The Content-Security-Policy of a page from this server, as the browser reached it.
    ``inline_style``: the app's page, whose terminal (xterm.js, bundled by textual-serve)
    writes ``<style>`` elements of its own; its scripts still come from this server only."""
    host = request.host
    styles = "'self' 'unsafe-inline'" if inline_style else "'self'"
    return (f"default-src 'self'; script-src 'self'; style-src {styles}; img-src 'self' data:; "
            f"font-src 'self'; connect-src 'self' ws://{host} wss://{host}; object-src 'none'; "
            "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


PROTECTIVE = {"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
              # same-origin: a link to another site sends no address, while this server's own
              # forms keep their Origin (no-referrer would make it "null", refused)
              "Referrer-Policy": "same-origin"}


async def protect(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: the protective headers on every response, refusals and
    static files included (a handler may have set its page's own policy: it stays)."""
    response.headers.setdefault("Content-Security-Policy", content_policy(request))
    for name, value in PROTECTIVE.items():
        response.headers[name] = value


@web.middleware
async def contain_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A handler's unexpected error: HTTP 500 and one log line (the traceback only with
    ``--debug``: a class's terminal is no place for a request's locals)."""
    try:
        return await handler(request)
    except (web.HTTPException, ConnectionError):
        raise
    except Exception as error:  # noqa: BLE001 - one request's failure is not the class's
        if log.isEnabledFor(logging.DEBUG):
            log.debug("an error answering %s", request.path, exc_info=error)
        log.error("an error answering %s %s from %s: %s: %s", request.method, excerpt(request.path, 60)[1:-1],
                  request.remote, type(error).__name__, excerpt(str(error), 120)[1:-1])
        return web.Response(status=500, text="the server could not answer this request")
