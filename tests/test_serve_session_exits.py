"""Every way out of a session stops its app (sessions.py ``_run_session``), with a real
keeper and a real app (``sleep``), on a server stand-in: before, ``service.stop()`` ran only
once the tab's messages were being read, so a session cancelled while its keeper was still
starting, or failing just after the start, left the app to the keeper's idle timeout (600 s).
"""
from __future__ import annotations

import asyncio
import logging
import secrets
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from serve_helpers import load

from radixviz.classroom import textual_serve_adapter
from radixviz.classroom.keepers import KeeperGone
from radixviz.classroom.sessions import SessionRoutes
from radixviz.classroom.textual_serve_adapter import DownloadManager

pytestmark = pytest.mark.slow


class Tab:
    """The websocket side a session writes to (nothing reads it here)."""
    async def send_bytes(self, data: bytes) -> None: ...
    async def send_str(self, data: str) -> None: ...
    async def close(self, **_options) -> None: ...


class Front(SessionRoutes):
    """What the server gives a session, no more: one student's folder, no former front."""

    def __init__(self, home: Path, watch=None) -> None:
        self.seconds = str(600 + secrets.randbelow(10**6))     # names this test's app among all processes
        self.command, self.debug = f"exec sleep {self.seconds}", False
        self.download_manager, self.detached, self.detached_timeout = DownloadManager(), {}, 600.0
        self.processes: set = set()
        self.roster = SimpleNamespace(home=lambda student: home)
        self.priorities = SimpleNamespace(watch=watch or (lambda pid: None), forget=lambda pid: None)
        self.memory_mb, self.confine_memory, self.last_keystroke = 2560, True, {}
        self.budget = SimpleNamespace(share=5_000_000)

    def client_of(self, request) -> str:
        return "127.0.0.1"

    def session(self) -> asyncio.Future:
        return asyncio.ensure_future(self._run_session(Tab(), SimpleNamespace(query={}), SimpleNamespace(id="ada")))

    def left(self, home: Path) -> list[str]:
        """This test's keepers (by their folder) and apps (by their command), still there."""
        return [load.described([pid]) for pid in running()
                if str(home) in cmdline(pid) or cmdline(pid) == f"sleep {self.seconds}"]


def running() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


async def until(found, what: str):
    """``found()`` once true (a hang guard of 60 s: the keeper's idle timeout is 600 s)."""
    deadline = time.monotonic() + 60
    while not (value := found()):
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)
    return value


async def test_a_session_cancelled_while_its_keeper_starts_leaves_no_process(tmp_path):
    # a few tries, each in its own folder, until one hits the moment
    for attempt in range(5):
        if await cancelled_while_starting(tmp_path / str(attempt)):
            return
    pytest.fail("each keeper had said it listens before the cancellation: the moment was not hit")


async def cancelled_while_starting(home: Path) -> bool:
    """Cancel a session once its keeper runs, and wait for nothing of it to be left; True
    if the keeper had not said it listens yet (no pid file: it writes one just before), so
    the front was waiting for its line."""
    front = Front(home)
    session = front.session()
    await until(lambda: front.left(home), "no keeper started")
    await asyncio.sleep(0.005)          # past the keeper's own start (asyncio kills one cancelled there)
    too_late = any((home / "sessions").glob("*.json"))
    session.cancel()
    await asyncio.wait_for(session, 60)                            # the session takes the cancellation
    await gone(front, home)
    return not too_late


async def gone(front: Front, home: Path) -> None:
    """Until none of this test's keepers and apps is left (a hang guard of 60 s)."""
    deadline = time.monotonic() + 60
    while left := front.left(home):
        assert time.monotonic() < deadline, f"still there after 60 s: {left}"
        await asyncio.sleep(0.05)


async def test_a_session_failing_between_its_start_and_its_tab_stops_its_app(tmp_path, caplog):
    def watch(pid: int) -> None:
        raise RuntimeError("the kernel refused the priority change")

    front = Front(tmp_path, watch)
    with caplog.at_level(logging.ERROR, logger="radixviz.serve"):
        await asyncio.wait_for(front.session(), 60)                # stopped: quit, then killed after 10 s
    assert "a session ended on an error: RuntimeError" in caplog.text
    await gone(front, tmp_path)


async def test_a_keeper_the_session_cannot_attach_to_is_stopped(tmp_path, monkeypatch):
    async def refused(sock: Path):
        raise KeeperGone(str(sock))

    monkeypatch.setattr(textual_serve_adapter, "attach", refused)
    front = Front(tmp_path)
    await asyncio.wait_for(front.session(), 60)
    await gone(front, tmp_path)
