"""One student's app process, kept apart from the HTTP front (issue 39): a front that dies
(killed, crashed) does not take the apps with it.

``python -m radixviz.classroom.keeper FOLDER NAME IDLE MEMORY COMMAND`` runs in its own session
(the front starts it with ``start_new_session``). It owns the app's pipes and listens on
the unix socket FOLDER/NAME.sock (mode 0600, in the student's own folder under the
teacher's class folder); FOLDER/NAME.json says which keeper and app pids are behind it, for
the front's accounting. A front attaches over that socket:

- front to keeper: packets as textual-serve writes them to an app's stdin (kind, 4-byte
  size, payload); only whole ones reach the app, so a front killed mid-packet cannot
  desynchronise its stdin. ``A`` (attach: the front's first packet) is the keeper's own;
  a front that wants the app gone (the class ends, the app hangs) sends the keeper SIGTERM,
  which no full pipe can hold up;
- keeper to front: ``H`` (hello: the pids, as JSON), then the app's own packets (``D``,
  ``M``, ``P``), ``E`` (a piece of its stderr) and, last, ``X`` (its exit code).

While no front is attached the keeper goes on reading the app's output (so the app never
blocks on a full pipe) and keeps the newest BUFFER bytes of it; the front that attaches gets
them, then asks for a repaint. One front at a time: a second is sent ``B`` (busy). No
orphans: the keeper ends with its app (and the app with it: PR_SET_PDEATHSIG), on SIGTERM
(serve's shutdown), and after IDLE seconds with no front attached. Only the standard
library is imported: a keeper starts in a few milliseconds.

The app is confined to MEMORY bytes of address space (RLIMIT_AS; 0: no limit), set in the
app's process before its command runs: an allocation past it fails in that app alone
(MemoryError), never the machine's out-of-memory killer choosing another student's app or
the server. Its files are held to the student's share of the class's disk
(RADIXVIZ_DISK_SHARE, in its environment: radixviz.files checks each write against it) by
RLIMIT_FSIZE too: no one file grows past the share, whichever way it is written.
"""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
from collections import deque

PRELUDE = b"__GANGLION__\n"     # a Textual app's first line on stdout under the web driver
BUFFER = 1 << 20                # bytes of output kept while no front is attached
STDERR_KEPT = 4096              # bytes of the app's stderr kept (the front's too), for its last line
MAX_PACKET = 8 << 20            # a front's packet larger than this is no keystroke: the front is cut off
FIRST_FRONT_SECONDS = 20        # an app that ended before its first front attached waits this long for it
READY = b"ready"                # the keeper's one line on stdout, once it listens
DISK_SHARE_ENV = "RADIXVIZ_DISK_SHARE"   # radixviz.files' name (only the standard library here)


def packet(kind: bytes, payload: bytes) -> bytes:
    return kind + len(payload).to_bytes(4, "big") + payload


async def read_packet(reader: asyncio.StreamReader, most: int = MAX_PACKET) -> tuple[bytes, bytes]:
    """(kind, payload); IncompleteReadError at the end, ValueError for a packet over ``most``."""
    kind = await reader.readexactly(1)
    size = int.from_bytes(await reader.readexactly(4), "big")
    if size > most:
        raise ValueError(f"a packet of {size} bytes")
    return kind, await reader.readexactly(size)


def ending_with(parent: int, umask: int, memory: int = 0):
    """What the app runs before its command: Linux ends it when its keeper ends (SIGKILLed
    or not); a keeper already gone by then (between the fork and this) ends it at once. It
    gets the umask the keeper was started with (not the keeper's own, for its socket), and
    at most ``memory`` bytes of address space (0: as the keeper)."""
    def prepare() -> None:
        os.umask(umask)
        if memory > 0:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        share = os.environ.get(DISK_SHARE_ENV, "")
        if share.isdigit():     # Python ignores SIGXFSZ: a write past it fails with EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (int(share), int(share)))
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)
    return prepare


class Keeper:
    def __init__(self, folder: str, name: str, idle: float, command: str, memory: int = 0) -> None:
        self.folder, self.name, self.idle, self.command, self.memory = folder, name, idle, command, memory
        self.front: asyncio.StreamWriter | None = None
        self.kept: deque[bytes] = deque()
        self.kept_bytes = 0
        self.stderr_tail = b""
        self.detached = asyncio.Event()
        self.detached_at = 0.0
        self.done = asyncio.Event()
        self.first_front = asyncio.Event()
        self.app: asyncio.subprocess.Process | None = None

    # ------------------------------------------------------------- to the front
    def send(self, data: bytes) -> None:
        """To the attached front, or into the buffer (the oldest dropped past BUFFER: the
        front that attaches asks for a whole repaint anyway)."""
        if self.front is not None and not self.front.is_closing():
            self.front.write(data)
            return
        self.kept.append(data)
        self.kept_bytes += len(data)
        while self.kept_bytes > BUFFER and len(self.kept) > 1:
            self.kept_bytes -= len(self.kept.popleft())

    async def pump_stdout(self, stdout: asyncio.StreamReader) -> None:
        try:
            for _ in range(10):
                line = await stdout.readline()
                if not line or line == PRELUDE:
                    break
            while True:
                kind, payload = await read_packet(stdout, 1 << 30)
                self.send(packet(kind, payload))
                if self.front is not None:
                    with contextlib.suppress(ConnectionError):
                        await self.front.drain()
        except (asyncio.IncompleteReadError, ValueError):
            pass

    async def pump_stderr(self, stderr: asyncio.StreamReader) -> None:
        while data := await stderr.read(4096):
            self.stderr_tail = (self.stderr_tail + data)[-STDERR_KEPT:]
            if self.front is not None:
                self.send(packet(b"E", data))

    # ------------------------------------------------------------- from a front
    async def on_front(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            kind, _ = await asyncio.wait_for(read_packet(reader, 64), 10)
        except (asyncio.IncompleteReadError, ValueError, asyncio.TimeoutError, ConnectionError):
            writer.close()
            return
        if kind != b"A" or self.done.is_set():
            writer.close()
            return
        if self.front is not None:
            writer.write(packet(b"B", b""))
            writer.close()
            return
        assert self.app is not None
        self.detached.clear()
        self.front = writer
        self.first_front.set()
        writer.write(packet(b"H", json.dumps({"keeper": os.getpid(), "app": self.app.pid}).encode()))
        if self.stderr_tail:
            writer.write(packet(b"E", self.stderr_tail))
        while self.kept:
            writer.write(self.kept.popleft())
        self.kept_bytes = 0
        try:
            while True:
                kind, payload = await read_packet(reader)
                if self.app.stdin is not None and self.app.returncode is None:
                    # an app ending as a key arrives: its exit code still goes to this front
                    with contextlib.suppress(ConnectionError):
                        self.app.stdin.write(packet(kind, payload))
                        await self.app.stdin.drain()
        except (asyncio.IncompleteReadError, ValueError, ConnectionError):
            pass
        finally:
            if self.front is writer:
                self.front = None
                self.detached_at = asyncio.get_running_loop().time()
                self.detached.set()
            writer.close()

    def kill_app(self) -> None:
        if self.app is not None and self.app.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.app.kill()

    def end(self) -> None:
        """SIGTERM: the front wants the app gone. Its end is waited for by no front (one
        that has not attached by now never will: it gave up on this keeper)."""
        self.kill_app()
        self.first_front.set()

    async def reap_when_idle(self) -> None:
        """No front for ``idle`` seconds: the class went on without this app."""
        loop = asyncio.get_running_loop()
        while not self.done.is_set():
            await self.detached.wait()
            left = self.detached_at + self.idle - loop.time()
            if self.front is None and left <= 0:
                self.kill_app()
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.done.wait(), max(left, 0.05))

    # ------------------------------------------------------------- its life
    async def run(self) -> int:
        umask = os.umask(0o177)         # the socket and the pid file (0600): the teacher's alone
        started_in = os.getcwd()        # the app's working folder, as the front's
        os.chdir(self.folder)           # a relative name: a unix socket's path has 108 bytes at most
        server = await asyncio.start_unix_server(self.on_front, path=f"{self.name}.sock")
        self.app = app = await asyncio.create_subprocess_shell(
            self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=started_in, preexec_fn=ending_with(os.getpid(), umask, self.memory))
        with open(f"{self.name}.json.part", "w") as out:
            json.dump({"keeper": os.getpid(), "app": app.pid}, out)
        os.replace(f"{self.name}.json.part", f"{self.name}.json")
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self.end)
        loop.add_signal_handler(signal.SIGINT, lambda: None)    # a Ctrl+C is the front's to handle
        sys.stdout.buffer.write(READY + b" %d\n" % app.pid)
        sys.stdout.flush()
        os.close(1)                     # the front stops reading here
        self.detached_at = loop.time()
        self.detached.set()             # until the front that started it attaches
        reaper = asyncio.ensure_future(self.reap_when_idle())
        assert app.stdout is not None and app.stderr is not None
        await asyncio.gather(self.pump_stdout(app.stdout), self.pump_stderr(app.stderr))
        code = await app.wait()
        # an app that ended at once (a broken install): its first front still gets its
        # stderr and its code, so that the tab says why
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.first_front.wait(), FIRST_FRONT_SECONDS)
        self.done.set()
        reaper.cancel()
        for name in (f"{self.name}.sock", f"{self.name}.json"):
            with contextlib.suppress(OSError):
                os.unlink(name)
        server.close()
        self.send(packet(b"X", str(code).encode()))
        if self.front is not None:
            with contextlib.suppress(ConnectionError):
                await asyncio.wait_for(self.front.drain(), 5)
            self.front.close()
        return 0


def main(argv: list[str]) -> int:
    folder, name, idle, memory, command = argv
    return asyncio.run(Keeper(folder, name, float(idle), command, int(memory)).run())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
