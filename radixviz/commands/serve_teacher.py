"""The teacher's routes of the classroom server: their page (each student's progress and
disk, the class's limits), its CSV, and removing a student (a squatter, a made-up name),
which frees the name, deletes the folder and ends that student's open sessions.

Every route needs the teacher's key, printed when the server started. The key travels in a
URL once: ``/teacher?key=K`` sets an HttpOnly, SameSite=Strict cookie and redirects to a
clean ``/teacher``, so the address bar, the history and a projected screen never show it;
the CSV link and the page's forms then rely on the cookie. Removing is a POST from the
teacher's own page (its Origin is this server's, and it carries the page's CSRF token), so
another site cannot make the teacher's browser remove anyone.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets
from typing import TYPE_CHECKING

from aiohttp import web

from .serve_limits import mb
from .serve_pages import page
from .serve_students import class_rows, report_csv

if TYPE_CHECKING:
    from .serve_limits import DiskBudget, JoinLimiter
    from .serve_students import Roster

log = logging.getLogger("radixviz.serve")
COOKIE_SECONDS = 365 * 24 * 3600
TEACHER_COOKIE = "radixviz_teacher"


class TeacherRoutes:
    """Mixed into ClassroomServer: it has ``roster``, ``budget``, ``teacher_key``, the
    limits, ``open_sockets`` (student id -> their websockets) and the checks."""

    if TYPE_CHECKING:   # what the server provides (declared for the type checker only)
        roster: Roster
        budget: DiskBudget
        joins: JoinLimiter
        teacher_key: str
        title: str
        live: int
        max_sessions: int
        per_client: int
        open_sockets: dict[str, set]

        def host_allowed(self, request: web.Request) -> bool: ...
        def same_origin(self, request: web.Request) -> bool: ...
        def _refused(self, status: int, heading: str, message: str) -> web.Response: ...

    def _teacher(self, request: web.Request, key: str | None = None) -> bool:
        """The teacher's key, given (a form's), in the query (a script's curl) or in the cookie."""
        key = key or request.query.get("key") or request.cookies.get(TEACHER_COOKIE, "")
        return self.host_allowed(request) and secrets.compare_digest(key, self.teacher_key)

    def teacher_csrf(self) -> str:
        """The token the teacher's forms carry: known only to a page the server sent the
        teacher (a cookie alone, which a browser attaches for any page, is not enough)."""
        return hmac.new(self.teacher_key.encode(), b"teacher forms", hashlib.sha256).hexdigest()[:32]

    def _teacher_post(self, request: web.Request, form) -> bool:
        """A teacher's form: with the key itself, or with the cookie and the page's token."""
        key = str(form.get("key", ""))
        if key:
            return self._teacher(request, key)
        return (self._teacher(request, request.cookies.get(TEACHER_COOKIE, "") or "-")
                and secrets.compare_digest(str(form.get("csrf", "")), self.teacher_csrf()))

    def _not_teacher(self) -> web.Response:
        return self._refused(403, "Refused", "The teacher's page needs the key printed when the server started.")

    async def handle_teacher(self, request: web.Request) -> web.StreamResponse:
        if not self._teacher(request):
            return self._not_teacher()
        if "key" in request.query:
            # the key leaves the address bar at once: kept in a cookie only this server's
            # own pages send (Strict: not even a link from another site carries it)
            response = web.Response(status=303, headers={"Location": "/teacher", "Cache-Control": "no-store"})
            response.set_cookie(TEACHER_COOKIE, self.teacher_key, max_age=COOKIE_SECONDS, httponly=True,
                                samesite="Strict", secure=request.secure, path="/")
            return response
        loop = asyncio.get_running_loop()
        rows = await loop.run_in_executor(None, class_rows, self.roster)
        used = await loop.run_in_executor(None, lambda: self.budget.usage(everyone=True))
        failures = getattr(self, "start_failures", None)
        for row in rows:
            row["disk"] = mb(used.get(row["id"], 0))
            row["start_note"] = failures.note(row["id"]) if failures is not None else ""
        limits = {"students": len(rows), "max_students": self.roster.max_students,
                  "joins": self.joins.per_minute, "used": mb(sum(used.values())),
                  "budget": mb(self.budget.total), "share": mb(self.budget.share),
                  "sessions": self.max_sessions, "per_client": self.per_client,
                  "guard": getattr(self, "guard", None)}       # the connection caps, once serving
        return web.Response(content_type="text/html", headers={"Cache-Control": "no-store"}, text=page(
            "teacher", title=self.title, rows=rows, live=self.live, csrf=self.teacher_csrf(), limits=limits,
            removed=request.query.get("removed", "")[:80]))

    async def handle_teacher_csv(self, request: web.Request) -> web.StreamResponse:
        if not self._teacher(request):
            return self._not_teacher()
        rows = await asyncio.get_running_loop().run_in_executor(None, class_rows, self.roster)
        return web.Response(text=report_csv(rows), content_type="text/csv", charset="utf-8",
                            headers={"Content-Disposition": "attachment; filename=class-report.csv"})

    async def handle_teacher_remove(self, request: web.Request) -> web.StreamResponse:
        """``POST /teacher/remove`` (key, student): the student leaves the class."""
        if not self.same_origin(request):
            return self._refused(403, "Refused", "This form was not sent from the teacher's own page.")
        form = await request.post()
        if not self._teacher_post(request, form):
            return self._not_teacher()
        student_id = str(form.get("student", ""))[:80]
        student = await asyncio.get_running_loop().run_in_executor(None, self.roster.remove, student_id)
        if student is None:
            return self._refused(404, "No such student", "This student is not in the class (removed already?).")
        for websocket in list(self.open_sockets.get(student.id, ())):
            await websocket.close(code=4003, message=b"Your teacher removed you from the class.")
        log.info("the teacher removed a student (%d in the class)", len(self.roster.students()))
        raise web.HTTPSeeOther("/teacher?removed=1")
