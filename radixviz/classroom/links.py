"""Personal links (``/?student=KEY``) without login CSRF.

A link key is a student's whole identity: a page on any other site that sends a browser to
``/?student=<the attacker's key>`` (a top-level navigation, which SameSite=Lax cookies let
through; an ``<img>`` from another port of the same host) must not make that browser the
attacker's student, or the victim's lessons, scores and scripts would land in the
attacker's folder. So a link binds the browser at once only when it has no student yet and
the browser says the person opened it themselves (``Sec-Fetch-Site: none``: typed, pasted
or a bookmark). Otherwise it shows a page, "You are Bea on this browser. Continue as
Alice?", whose button is a POST carrying a single-use token, from this server's own page
(its Origin and Sec-Fetch-Site are checked), that no other site can frame.
"""
from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING

from aiohttp import web

from .guards import same_secret
from .pages import page

if TYPE_CHECKING:
    from .students import Student
    from .students import Roster

CLASS_COOKIE, STUDENT_COOKIE = "radixviz_class", "radixviz_student"
CONFIRM_SECONDS = 600       # a confirmation page's token lasts this long
MAX_PENDING = 1000          # tokens kept at once (the oldest dropped first): each is a page load
UNCACHED = {"Cache-Control": "no-store"}     # not framed, not sniffed: every page's headers (guards.py)


class LinkRoutes:
    """Mixed into ClassroomServer, which provides the roster, the class code and the checks."""

    if TYPE_CHECKING:   # what the server provides (declared for the type checker only)
        roster: Roster
        token: str | None
        title: str

        def student_of(self, request: web.Request): ...
        def _refused(self, status: int, heading: str, message: str) -> web.Response: ...
        def _expired(self) -> web.Response: ...
        def _gate(self, request: web.Request, *, post: bool = False) -> web.Response | None: ...
        def _cookie(self, response: web.StreamResponse, request: web.Request, name: str, value: str) -> None: ...

    _pending: dict     # token -> (student id, until): the confirmation pages not yet answered

    def _remember_link(self, request: web.Request) -> web.StreamResponse:
        """``/?class=CODE`` and ``/?student=KEY``: the class code kept in a cookie; the
        student's key bound at once only when safe, else asked (``_confirm_page``)."""
        query = request.query
        code = query.get("class")
        if self.token is not None and code is not None and not same_secret(code, self.token):
            return self._refused(403, "Wrong class link", "This link's class code is not this class's.")
        key = query.get("student")
        wanted = None if key is None else self.roster.get(key)
        if key is not None and wanted is None and self.roster.expired(key):
            return self._expired()
        if key is not None and wanted is None:
            return self._refused(404, "Unknown personal link", "No student of this class has this link.")
        current = self.student_of(request)
        typed = request.headers.get("Sec-Fetch-Site") == "none"
        if wanted is not None and (current is None or current.id != wanted.id) and not (current is None and typed):
            response = self._confirm_page(wanted, current)
        else:
            response = web.Response(status=303, headers={"Location": "/"})
            if wanted is not None:
                self._cookie(response, request, STUDENT_COOKIE, wanted.id)
        if self.token is not None and code is not None:
            self._cookie(response, request, CLASS_COOKIE, self.token)
        return response

    def _confirm_page(self, wanted: Student, current: Student | None) -> web.Response:
        now = time.monotonic()
        pending = {t: p for t, p in self._pending.items() if p[1] > now}
        while len(pending) >= MAX_PENDING:
            pending.pop(next(iter(pending)))
        token = secrets.token_urlsafe(24)
        pending[token] = (wanted.id, now + CONFIRM_SECONDS)
        self._pending = pending
        return web.Response(content_type="text/html", headers=UNCACHED, text=page(
            "confirm", title=self.title, wanted=wanted.name, current=current.name if current else "",
            token=token))

    async def handle_link_confirm(self, request: web.Request) -> web.StreamResponse:
        """``POST /link`` from the confirmation page: the browser becomes that student."""
        refusal = self._gate(request, post=True)
        if refusal is not None:
            return refusal
        form = await request.post()
        found = self._pending.pop(str(form.get("token", ""))[:64], None)
        if found is None or found[1] < time.monotonic() or self.roster.get(found[0]) is None:
            return self._refused(403, "This page has expired", "Open your personal link again.")
        response = web.Response(status=303, headers={"Location": "/"})
        self._cookie(response, request, STUDENT_COOKIE, found[0])
        return response
