"""A student's files through the classroom server: a file their session delivers (a saved
script, an export) fetched by their browser, and a script uploaded from their computer into
their own folder. Mixed into ClassroomServer, which provides the checks, the roster, the
disk budget and the session caps.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING
from urllib.parse import unquote

from aiohttp import web

from radixviz.files import ReadError, atomic_write, decode_text, free_name
from radixviz.script import ScriptError, parse_script
from radixviz.tui.sandbox_work import MAX_SCRIPTS, SUFFIX, safe_name

if TYPE_CHECKING:
    from radixviz.settings import SessionCaps

    from .limits import DiskBudget
    from .students import Roster
    from .textual_serve_adapter import DownloadManager

MAX_UPLOAD = 100_000      # bytes in an uploaded script (less where the memory budget says so)


class FileRoutes:
    """``/download/{key}`` and ``/upload``."""

    if TYPE_CHECKING:   # what the server provides (declared for the type checker only)
        download_manager: DownloadManager
        roster: Roster
        budget: DiskBudget
        caps: SessionCaps

        def student_of(self, request: web.Request): ...
        def _gate(self, request: web.Request, *, post: bool = False) -> web.Response | None: ...

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        """A file a session delivers (a saved script, an export): only to its own student."""
        refusal = self._gate(request)
        if refusal is not None:
            return refusal
        student = self.student_of(request)
        try:
            download = await self.download_manager.get_download_metadata(request.match_info["key"])
        except KeyError:
            raise web.HTTPNotFound(text="no such download") from None
        if student is None or getattr(download.app_service, "student", None) != student.id:
            raise web.HTTPNotFound(text="no such download")
        return await super().handle_download(request)  # type: ignore[misc]

    async def handle_upload(self, request: web.Request) -> web.StreamResponse:
        """A script from the student's computer into their own folder (ctrl+o opens it)."""
        refusal = self._gate(request, post=True)
        if refusal is not None:
            return refusal
        student = self.student_of(request)
        if student is None:
            return web.Response(status=403, text="join the class first")
        data = await request.read()      # read already, within its deadline (body_deadline)
        most = min(MAX_UPLOAD, self.caps.script_bytes)
        if len(data) > most:
            return web.Response(status=413, text=f"not uploaded: a script has at most {most:,} bytes here")
        try:
            parse_script(decode_text(data), "the upload")
        except (ReadError, ScriptError) as exc:
            return web.Response(status=400, text=f"not uploaded: {exc}")
        full = await asyncio.get_running_loop().run_in_executor(None, self.budget.refusal, student, len(data))
        if full is not None:
            return web.Response(status=507, text=f"not uploaded: {full}")
        folder = self.roster.home(student) / "scripts"
        folder.mkdir(parents=True, exist_ok=True)
        if len(list(folder.glob(f"*{SUFFIX}"))) >= MAX_SCRIPTS:
            return web.Response(status=507, text=f"not uploaded: your folder already holds {MAX_SCRIPTS} scripts")
        target = free_name(folder / safe_name(unquote(request.headers.get("X-File-Name", ""))[:200]))
        atomic_write(target, data)
        self.budget.added(student, len(data))
        return web.Response(text=f"uploaded {target.name}: in the sandbox, ctrl+o opens it")
