"""Everything the classroom takes from textual-serve, in one place.

textual-serve (pinned in pyproject.toml to a range tested here) gives the classroom two
classes: ``Server`` (its static folder, its download manager, its logging) and
``AppService`` (one app process and the packet protocol on its pipes). The classroom
overrides three of AppService's private parts and reads two of its private attributes;
they are all here, and ``PRIVATE`` lists them for tests/test_serve_adapter.py, which fails
as soon as a new textual-serve renames one or changes its signature:

- ``_build_environment(width, height)``: the app's environment, plus the student's folder;
- ``_open_app_process(width, height)``: the app started behind a keeper (keeper.py), in its
  own session, so that a front that dies does not take it along;
- ``run()``: the reader, rewritten to read the keeper's socket, note the first frame and keep
  stderr's tail (textual-serve's echoes stderr to the server's output, and says nothing of
  a first frame);
- ``stop()``: quit, then a kill for an app that does not;
- ``on_meta``: an app's "exit" no longer closes the tab at once (with code 1000 and no
  reason, whatever the app died of): the session's watchers close it, saying why;
- ``_process``, ``_task``, ``_stdin``: the app process, the reader's task, its stdin (here
  the keeper's socket, which passes whole packets on to the app's stdin).

Its download manager keeps every delivery an app announced until the browser fetches it
(with the app session behind it), and a fetch that waits past its timeout raises inside
its generator, leaving the response half sent: ``ClassroomDownloads`` keeps an app's newest
few for a minute, as the app itself does (radixviz/tui/browser_tab.py), forgets an app's
when it stops, and ends such a fetch cleanly. It reads ``DownloadManager._active_downloads``.

Nothing else in radixviz imports textual_serve.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any

from radixviz.settings import SERVED_CAPS, SessionCaps

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager
from textual_serve.server import Server

from .keeper import STDERR_KEPT, read_packet
from .keepers import IDLE_SECONDS, Attached, attach, start_keeper, stop_keeper

__all__ = ["PRIVATE", "ClassroomDownloads", "DownloadManager", "KeptApp", "Server", "ServedApp"]

QUIT_SECONDS = 10          # an app told to quit that is still running then is killed

# (class, private name, its signature as inspect prints it, or None for an attribute set in
# __init__): what this module leans on; a test compares them with the installed textual-serve
PRIVATE = [
    (AppService, "_build_environment", "(self, width: 'int' = 80, height: 'int' = 24) -> 'dict[str, str]'"),
    (AppService, "_open_app_process", "(self, width: 'int' = 80, height: 'int' = 24) -> 'Process'"),
    (AppService, "run", "(self) -> 'None'"),
    (AppService, "start", "(self, width: 'int', height: 'int') -> 'None'"),
    (AppService, "stop", "(self) -> 'None'"),
    (AppService, "on_meta", "(self, data: 'bytes') -> 'None'"),
    (AppService, "_process", None),
    (AppService, "_task", None),
    (AppService, "_stdin", None),
    (DownloadManager, "_active_downloads", None),
    (DownloadManager, "download", "(self, delivery_key: 'str') -> 'AsyncGenerator[bytes, None]'"),
]


class ClassroomDownloads(DownloadManager):
    """textual-serve's download manager, bounded as the apps bound their deliveries."""

    def __init__(self, caps: SessionCaps = SERVED_CAPS, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.caps, self.clock = caps, clock
        self.announced: dict[str, deque] = {}        # app service id -> (when, key), oldest first

    async def create_download(self, *, app_service: AppService, delivery_key: str, **details: Any) -> None:
        await super().create_download(app_service=app_service, delivery_key=delivery_key, **details)
        mine = self.announced.setdefault(app_service.app_service_id, deque())
        mine.append((self.clock(), delivery_key))
        # a little before the app drops its own: a fetch then is refused (404), never left waiting
        expired = self.clock() - self.caps.delivery_seconds + 2
        while mine and (len(mine) > self.caps.deliveries or mine[0][0] < expired):
            self._active_downloads.pop(mine.popleft()[1], None)

    async def download(self, delivery_key: str) -> AsyncGenerator[bytes, None]:
        try:
            async for chunk in super().download(delivery_key):
                yield chunk
        except ValueError:     # its task_done() after a chunk that never came: the fetch ends here
            self._active_downloads.pop(delivery_key, None)

    def forget_app(self, app_service_id: str) -> None:
        """The app stopped: its deliveries (and with them the session) are let go."""
        for _, key in self.announced.pop(app_service_id, ()):
            self._active_downloads.pop(key, None)


class KeptApp:
    """The app process behind a keeper, as the session code sees it (a process's pid,
    returncode, wait and kill): the exit code comes over the keeper's socket."""

    def __init__(self, attached: Attached) -> None:
        self.attached = attached
        self.pid, self.keeper_pid = attached.app_pid, attached.keeper_pid
        self.returncode: int | None = None
        self.ended = asyncio.Event()

    def ended_with(self, code: int | None) -> None:
        if code is not None:
            self.returncode = code
        self.ended.set()

    async def wait(self) -> int | None:
        await self.ended.wait()
        return self.returncode

    def kill(self) -> None:
        """Have the keeper kill the app (its exit comes back as usual): a signal, not a
        packet, so that an app that hangs with its stdin full cannot hold it up."""
        stop_keeper(self.keeper_pid)


class ServedApp(AppService):
    """One student's app process: started with the student's own environment (``env``)
    behind a keeper (keeper.py) in ``folder``, or attached to one a former front left there;
    its first frame noted (``drew``) and its stderr's tail kept."""

    def __init__(self, command: str, *, write_bytes: Callable[[bytes], Awaitable[None]],
                 write_str: Callable[[str], Awaitable[None]], close: Callable[..., Awaitable[object]],
                 download_manager: DownloadManager, debug: bool = False, student: str, env: dict[str, str],
                 folder: Path | None = None, idle: float = IDLE_SECONDS, memory: int = 0) -> None:
        super().__init__(command, write_bytes=write_bytes, write_str=write_str, close=close,  # type: ignore[arg-type]
                         download_manager=download_manager, debug=debug)
        self.student, self.extra_env = student, env
        self.folder, self.idle, self.memory = folder, idle, memory
        self.drew = asyncio.Event()
        self.stderr_tail = b""
        self.kept: KeptApp | None = None

    @property
    def process(self) -> KeptApp | None:
        return self.kept

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment.update(self.extra_env)
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> KeptApp:  # type: ignore[override]
        """textual-serve's, but the app runs behind a keeper in its own session: a front
        that dies leaves it running, for the next front to attach to."""
        assert self.folder is not None
        sock, keeper = await start_keeper(self.command, self._build_environment(width=width, height=height),
                                          self.folder, self.idle, self.memory)
        try:
            return self._adopt(await attach(sock))
        except BaseException:       # not attached (cancelled, refused): nobody would stop it but its idle timeout
            stop_keeper(keeper)
            raise

    def _adopt(self, attached: Attached) -> KeptApp:
        self.kept = KeptApp(attached)
        self._stdin = attached.writer
        return self.kept

    async def reattach(self, attached: Attached, width: int, height: int) -> None:
        """Go on with an app a former front started; it repaints the whole screen (two
        sizes: a size it already has would redraw only what changed, and the tab is blank)."""
        self._adopt(attached)
        self._task = asyncio.create_task(self.run())
        await self.set_terminal_size(width, max(height - 1, 1))
        await self.set_terminal_size(width, height)

    async def on_data(self, payload: bytes) -> None:
        self.drew.set()
        await super().on_data(payload)

    async def on_meta(self, data: bytes) -> None:
        """textual-serve's, but "exit" is left to the session's watchers (starts.py): they
        close the tab once the app's exit code says how it ended."""
        try:
            if json.loads(data).get("type") == "exit":
                return
        except (ValueError, AttributeError):
            return
        await super().on_meta(data)

    async def stop(self) -> None:
        """textual-serve's (quit, then wait for the app), but an app that does not quit
        within QUIT_SECONDS is killed; so is one whose stop is cancelled (no waiting then)."""
        if self._task is None:
            return
        try:
            await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
            if isinstance(self._download_manager, ClassroomDownloads):
                self._download_manager.forget_app(self.app_service_id)
            await self.send_meta({"type": "quit"})
            try:
                await asyncio.wait_for(asyncio.shield(self._task), QUIT_SECONDS)
            except asyncio.TimeoutError:
                if self.kept is not None:
                    self.kept.kill()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._task, QUIT_SECONDS)
        except asyncio.CancelledError:
            if self.kept is not None:
                self.kept.kill()
            raise
        finally:
            self._task = None

    async def run(self) -> None:
        kept = self.kept
        assert kept is not None
        reader = kept.attached.reader
        handlers = {b"D": self.on_data, b"M": self.on_meta, b"P": self.on_packed}
        code = None
        try:
            while True:
                kind, payload = await read_packet(reader, 1 << 30)
                if kind == b"E":
                    self.stderr_tail = (self.stderr_tail + payload)[-STDERR_KEPT:]
                elif kind == b"X":
                    code = int(payload)
                    break
                else:
                    handler = handlers.get(kind)
                    if handler is not None:
                        await handler(payload)
        except (asyncio.IncompleteReadError, ConnectionResetError, asyncio.CancelledError, ValueError):
            pass
        finally:
            kept.ended_with(code)
            kept.attached.writer.close()
