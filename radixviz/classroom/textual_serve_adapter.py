"""Everything the classroom takes from textual-serve, in one place.

textual-serve (pinned in pyproject.toml to a range tested here) gives the classroom two
classes: ``Server`` (its static folder, its download manager, its logging) and
``AppService`` (one app process and the packet protocol on its pipes). The classroom
overrides three of AppService's private parts and reads two of its private attributes;
they are all here, and ``PRIVATE`` lists them for tests/test_serve_adapter.py, which fails
as soon as a new textual-serve renames one or changes its signature:

- ``_build_environment(width, height)``: the app's environment, plus the student's folder;
- ``_open_app_process(width, height)``: the app started so that it ends with the server;
- ``run()``: the pipe reader, rewritten to note the first frame and keep stderr's tail
  (textual-serve's echoes stderr to the server's output, and says nothing of a first frame);
- ``_process``, ``_task``, ``_stdin``: the app process, the reader's task, its stdin.

Nothing else in radixviz imports textual_serve.
"""
from __future__ import annotations

import asyncio
import ctypes
import signal
from collections.abc import Awaitable, Callable

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager
from textual_serve.server import Server

__all__ = ["PRIVATE", "DownloadManager", "Server", "ServedApp"]

STDERR_KEPT = 4096          # bytes of the app's stderr kept, for its last line
PRELUDE = b"__GANGLION__\n"  # a Textual app's first line on stdout under the web driver

# (class, private name, its signature as inspect prints it, or None for an attribute set in
# __init__): what this module leans on; a test compares them with the installed textual-serve
PRIVATE = [
    (AppService, "_build_environment", "(self, width: 'int' = 80, height: 'int' = 24) -> 'dict[str, str]'"),
    (AppService, "_open_app_process", "(self, width: 'int' = 80, height: 'int' = 24) -> 'Process'"),
    (AppService, "run", "(self) -> 'None'"),
    (AppService, "start", "(self, width: 'int', height: 'int') -> 'None'"),
    (AppService, "_process", None),
    (AppService, "_task", None),
    (AppService, "_stdin", None),
]


class ServedApp(AppService):
    """One student's app process: started with the student's own environment (``env``),
    ended with the server, its first frame noted (``drew``) and its stderr's tail kept."""

    def __init__(self, command: str, *, write_bytes: Callable[[bytes], Awaitable[None]],
                 write_str: Callable[[str], Awaitable[None]], close: Callable[..., Awaitable[object]],
                 download_manager: DownloadManager, debug: bool = False, student: str, env: dict[str, str]) -> None:
        super().__init__(command, write_bytes=write_bytes, write_str=write_str, close=close,  # type: ignore[arg-type]
                         download_manager=download_manager, debug=debug)
        self.student, self.extra_env = student, env
        self.drew = asyncio.Event()
        self.stderr_tail = b""

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        return self._process

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment.update(self.extra_env)
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        """textual-serve's, but the app process ends with the server (Linux): a server that
        is killed leaves no session running on its own."""
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_shell(
            self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=environment, preexec_fn=end_with_parent)
        self._stdin = process.stdin
        return process

    async def on_data(self, payload: bytes) -> None:
        self.drew.set()
        await super().on_data(payload)

    async def run(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None and process.stderr is not None
        stdout, stderr = process.stdout, process.stderr

        async def keep_stderr() -> None:
            while data := await stderr.read(4096):
                self.stderr_tail = (self.stderr_tail + data)[-STDERR_KEPT:]

        kept = asyncio.ensure_future(keep_stderr())
        handlers = {b"D": self.on_data, b"M": self.on_meta, b"P": self.on_packed}
        try:
            for _ in range(10):                  # the prelude line comes first
                line = await stdout.readline()
                if not line or line == PRELUDE:
                    break
            while True:
                kind = await stdout.readexactly(1)
                size = int.from_bytes(await stdout.readexactly(4), "big")
                payload = await stdout.readexactly(size)
                handler = handlers.get(kind)
                if handler is not None:
                    await handler(payload)
        except (asyncio.IncompleteReadError, ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            try:                                 # what it said last, as it went
                await asyncio.wait_for(kept, 2)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                kept.cancel()


def end_with_parent() -> None:
    """In the app process before it runs: ask Linux to end it when the server ends."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
