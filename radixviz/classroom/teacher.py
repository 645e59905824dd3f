"""The teacher's routes of the classroom server: their page (each student's progress and
disk, the class's limits), its CSV, and removing a student (a squatter, a made-up name),
which frees the name, deletes the folder and ends that student's open sessions.

The report is safe to project: each personal link is masked (``/?student=xk3…``); a row's
"show link" shows it in full, "new link" issues a fresh key (the old one stops at once, the
student's sessions end, their folder moves with them). The forms name a row by a handle
derived from the teacher's key, never by the student's key.

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
import os
import re
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from .guards import same_secret
from .keepers import stop_keeper
from .limits import mb
from .live import lesson_index, live_columns
from .pages import page
from .students import class_rows, report_csv

if TYPE_CHECKING:
    from .limits import DiskBudget, JoinLimiter, RequestRate
    from .students import Roster

log = logging.getLogger("radixviz.serve")
COOKIE_SECONDS = 365 * 24 * 3600
TEACHER_COOKIE = "radixviz_teacher"
TEACHER_KEY_FILE = "teacher-key"
REPLACED = b"Your personal link was replaced: ask your teacher for the new one."
_KEY = re.compile(r"[A-Za-z0-9_-]{16,64}")


class TeacherRoutes:
    """Mixed into ClassroomServer: it has ``roster``, ``budget``, ``teacher_key``, the
    limits, ``open_sockets`` (student id -> their websockets) and the checks."""

    if TYPE_CHECKING:   # what the server provides (declared for the type checker only)
        roster: Roster
        budget: DiskBudget
        joins: JoinLimiter
        requests: RequestRate
        teacher_key: str
        token: str | None
        title: str
        live: int
        max_sessions: int
        per_client: int
        open_sockets: dict[str, set]
        detached: dict

        def host_allowed(self, request: web.Request) -> bool: ...
        def same_origin(self, request: web.Request) -> bool: ...
        def _refused(self, status: int, heading: str, message: str) -> web.Response: ...

    def _teacher(self, request: web.Request, key: str | None = None) -> bool:
        """The teacher's key, given (a form's), in the query (a script's curl) or in the cookie."""
        key = key or request.query.get("key") or request.cookies.get(TEACHER_COOKIE, "")
        return self.host_allowed(request) and same_secret(key, self.teacher_key)

    def teacher_csrf(self) -> str:
        """The token the teacher's forms carry: known only to a page the server sent the
        teacher (a cookie alone, which a browser attaches for any page, is not enough)."""
        return hmac.new(self.teacher_key.encode(), b"teacher forms", hashlib.sha256).hexdigest()[:32]

    def row_handle(self, student_id: str) -> str:
        """What the report's forms name a student by: not their key (the page is projected)."""
        return hmac.new(self.teacher_key.encode(), student_id.encode(), hashlib.sha256).hexdigest()[:16]

    def _student_named(self, given: str) -> str:
        """The student id a form names: a row's handle (the report's) or the id itself."""
        given = given[:80]
        for student in self.roster.students():
            if same_secret(given, self.row_handle(student.id)) or student.id == given:
                return student.id
        return ""

    def _teacher_post(self, request: web.Request, form) -> bool:
        """A teacher's form: with the key itself, or with the cookie and the page's token."""
        key = str(form.get("key", ""))
        if key:
            return self._teacher(request, key)
        return (self._teacher(request, request.cookies.get(TEACHER_COOKIE, "") or "-")
                and same_secret(str(form.get("csrf", "")), self.teacher_csrf()))

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
        index = await loop.run_in_executor(None, lesson_index, tuple(getattr(self, "lesson_dirs", ())))
        failures = [getattr(self, name, None) for name in ("start_failures", "app_ends")]
        shown = request.query.get("shown", "")[:16]
        base = f"{request.scheme}://{request.host}"
        keystrokes = getattr(self, "last_keystroke", {})
        for row in rows:
            row["handle"] = self.row_handle(row["id"])
            # masked: a projected report must not sign anyone in; "show link" shows one row's
            code = f"&class={self.token}" if self.token else ""
            row["shown"] = bool(shown) and row["handle"] == shown
            row["link"] = (f"{base}/?student={row['id']}{code}" if row["shown"] else f"/?student={row['id'][:3]}…")
            row["disk"] = mb(used.get(row["id"], 0))
            row["start_note"] = "; ".join(note for f in failures if f is not None and (note := f.note(row["id"])))
            live_columns(row, index, keystrokes.get(row["id"]), bool(self.open_sockets.get(row["id"])))
        limits = {"students": len(rows), "max_students": self.roster.max_students,
                  "joins": self.joins.per_minute,
                  "requests": f"{self.requests.per_second:g}", "used": mb(sum(used.values())),
                  "budget": mb(self.budget.total), "share": mb(self.budget.share),
                  "sessions": self.max_sessions, "per_client": self.per_client,
                  "per_student": getattr(self, "per_student", 3),
                  "memory": getattr(self, "memory_mb", None),
                  "guard": getattr(self, "guard", None),       # the connection caps, once serving
                  "key_days": self.roster.key_days}
        return web.Response(content_type="text/html", headers={"Cache-Control": "no-store"}, text=page(
            "teacher", title=self.title, rows=rows, live=self.live, csrf=self.teacher_csrf(), limits=limits,
            removed=request.query.get("removed", "")[:80], renewed=request.query.get("renewed", "")[:16]))

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
        student_id = self._student_named(str(form.get("student", "")))
        student = await asyncio.get_running_loop().run_in_executor(None, self.roster.remove, student_id)
        if student is None:
            return self._refused(404, "No such student", "This student is not in the class (removed already?).")
        for websocket in list(self.open_sockets.get(student.id, ())):
            await websocket.close(code=4003, message=b"Your teacher removed you from the class.")
        for sock, info in list(self.detached.items()):      # apps a former front left running for them
            if info.get("student") == student.id:
                stop_keeper(int(info["keeper"]))
                self.detached.pop(sock, None)
        log.info("the teacher removed a student (%d in the class)", len(self.roster.students()))
        raise web.HTTPSeeOther("/teacher?removed=1")

    async def handle_teacher_show(self, request: web.Request) -> web.StreamResponse:
        """``POST /teacher/show`` (csrf, student): the report with that row's link in full."""
        form = await self._teacher_form(request)
        handle = self.row_handle(self._student_named(str(form.get("student", ""))) or "-")
        raise web.HTTPSeeOther(f"/teacher?shown={handle}")

    async def handle_teacher_new_link(self, request: web.Request) -> web.StreamResponse:
        """``POST /teacher/new-link`` (csrf, student): a fresh key; the old one answers 404
        at once and its sessions end; the student's folder (their progress) moves along."""
        form = await self._teacher_form(request)
        student_id = self._student_named(str(form.get("student", "")))
        for websocket in list(self.open_sockets.get(student_id, ())):
            await websocket.close(code=4005, message=REPLACED)
        for _ in range(50):        # their app processes end before the folder moves (bounded)
            if not self.open_sockets.get(student_id):
                break
            await asyncio.sleep(0.1)
        student = await asyncio.get_running_loop().run_in_executor(None, self.roster.rekey, student_id)
        if student is None:
            return self._refused(404, "No such student", "This student is not in the class (removed already?).")
        log.info("the teacher issued a new personal link")
        raise web.HTTPSeeOther(f"/teacher?renewed={self.row_handle(student.id)}")

    async def _teacher_form(self, request: web.Request):
        """A teacher's form posted from their own page, or HTTP 403."""
        if not self.same_origin(request):
            raise web.HTTPForbidden(text="This form was not sent from the teacher's own page.")
        form = await request.post()
        if not self._teacher_post(request, form):
            raise web.HTTPForbidden(text="The teacher's page needs the key printed when the server started.")
        return form


def teacher_key_for(folder: Path, renew: bool, days: int) -> str:
    """The class's teacher key, kept in its folder (owner-only) so the report's cookie
    survives a restart; a new one with ``renew`` (serve --new-teacher-key) or once it is
    older than ``days``."""
    path = Path(folder) / TEACHER_KEY_FILE
    try:
        key = path.read_text().strip()
        fresh = time.time() - path.stat().st_mtime <= days * 86400
    except OSError:
        key, fresh = "", False
    if renew or not fresh or not _KEY.fullmatch(key):
        key = secrets.token_urlsafe(18)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(key + "\n")
    return key
