"""The front's side of the keepers (keeper.py): start one for a new app, find one a front
before this one left behind, attach to it, stop them all when the class ends.

A student's keepers live in ``<their folder>/sessions``: NAME.sock, where a front attaches,
and NAME.json, the keeper's and the app's pids. A keeper whose socket refuses a connection is
gone (SIGKILLed, the machine rebooted): its files are removed and the student gets a fresh
app at the saved place, as after any app that died.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from .keeper import READY, packet, read_packet

IDLE_SECONDS = 600      # a keeper with no front attached this long ends its app (serve --detached-timeout)
READY_SECONDS = 20      # a keeper has this long to say it listens


_REAPING: set[asyncio.Future] = set()


class KeeperGone(Exception):
    """No keeper behind that socket (stale), or it is serving another front."""


def sessions_folder(home: Path) -> Path:
    folder = home / "sessions"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


@dataclass
class Attached:
    """A front's connection to a keeper, and the pids behind it."""
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    keeper_pid: int
    app_pid: int
    socket: Path


async def start_keeper(command: str, env: dict[str, str], folder: Path, idle: float,
                       memory: int = 0) -> tuple[Path, int]:
    """A new keeper in its own session, running ``command`` within ``memory`` bytes of
    address space (0: no limit): its socket's path once it listens, and its pid. A keeper
    given up on (silent, or the session cancelled or failing while it starts) is killed,
    and its app with it (PR_SET_PDEATHSIG): no app is left to its idle timeout."""
    name = secrets.token_hex(8)
    keeper = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "radixviz.classroom.keeper", str(folder), name, str(idle), str(memory), command,
        env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
    # reaped when it ends, by this front (a front started after this one is not its parent)
    reaping = asyncio.ensure_future(keeper.wait())
    _REAPING.add(reaping)
    reaping.add_done_callback(_REAPING.discard)
    assert keeper.stdout is not None
    line = b""
    try:
        with contextlib.suppress(asyncio.TimeoutError):
            line = await asyncio.wait_for(keeper.stdout.readline(), READY_SECONDS)
    finally:
        if not line.startswith(READY):       # silent, or this wait cancelled: the keeper is not wanted
            with contextlib.suppress(ProcessLookupError):
                keeper.kill()
    if not line.startswith(READY):
        raise OSError("the session's keeper did not start")
    return folder / f"{name}.sock", keeper.pid


async def attach(sock: Path) -> Attached:
    """Connect to the keeper behind ``sock`` and say so; KeeperGone if none answers."""
    # through the folder's descriptor: the path itself may be longer than a socket's 108 bytes
    folder = os.open(sock.parent, os.O_PATH)
    try:
        reader, writer = await asyncio.open_unix_connection(f"/proc/self/fd/{folder}/{sock.name}")
    except (ConnectionRefusedError, FileNotFoundError) as exc:
        raise KeeperGone(str(sock)) from exc
    finally:
        os.close(folder)
    writer.write(packet(b"A", b""))
    try:
        kind, payload = await asyncio.wait_for(read_packet(reader, 4096), READY_SECONDS)
        hello = json.loads(payload) if kind == b"H" else None
    except (asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError, ConnectionError):
        hello = None
    if not isinstance(hello, dict):
        writer.close()
        raise KeeperGone(str(sock))
    return Attached(reader, writer, int(hello["keeper"]), int(hello["app"]), sock)


def remove_stale(sock: Path) -> None:
    for path in (sock, sock.with_suffix(".json")):
        with contextlib.suppress(OSError):
            path.unlink()


def is_keeper(pid: int) -> bool:
    """Whether ``pid`` runs a keeper (and not a process that reused a dead keeper's pid)."""
    try:
        return b"radixviz.classroom.keeper" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def left_behind(home: Path) -> dict[Path, dict]:
    """The keepers in a student's folder, alive, with their pids (socket path -> info);
    the files of those that are gone are removed."""
    found: dict[Path, dict] = {}
    folder = home / "sessions"
    if not folder.is_dir():
        return found
    for sock in folder.glob("*.sock"):
        try:
            info = json.loads(sock.with_suffix(".json").read_text())
            alive = is_keeper(int(info["keeper"]))
        except (OSError, ValueError, KeyError, TypeError):
            info, alive = {}, False
        if alive:
            found[sock] = info
        else:
            remove_stale(sock)
    return found


def stop_keeper(pid: int) -> None:
    """SIGTERM: the keeper ends its app, removes its files and exits."""
    if is_keeper(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)


async def wait_gone(pids: list[int], timeout: float = 10) -> None:
    """Until none of ``pids`` runs a keeper any more (bounded)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + timeout
    while any(is_keeper(pid) for pid in pids) and loop.time() < until:
        await asyncio.sleep(0.1)
