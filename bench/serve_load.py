"""A classroom on localhost: N sessions of ``radixviz serve`` at once, memory per session.

Each session is a websocket client speaking the browser's protocol (the page's address, then
its websocket), so no browser is needed for the count. Prints JSON:

    python bench/serve_load.py [--sessions 20] [--timeout 180]

Memory is read from /proc for each session's app process: PSS (shared pages split between
the processes sharing them: what a session really adds) and RSS (what ``top`` shows).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HOME_MARK = "Sandbox: an empty cache"
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(max_sessions: int, *extra: str, port: int | None = None):
    """``radixviz serve`` on 127.0.0.1; returns (process, base url) once it listens."""
    port = port or free_port()
    proc = subprocess.Popen([sys.executable, "-m", "radixviz", "serve", "--port", str(port),
                             "--max-sessions", str(max_sessions), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"serve exited: {proc.stdout.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("serve did not start listening within 60 s")


def stop_server(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def children(pid: int) -> list[int]:
    """The app processes the server started (its direct children)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: the fields follow the last ')'
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def memory_mb(pid: int) -> dict:
    """PSS and RSS of one process in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Rss", "Pss"):
            fields[name.lower()] = int(rest.split()[0]) / 1024
    return fields


def has_torch(pid: int) -> bool:
    """Whether torch's shared library is mapped into the process."""
    try:
        return "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def screen_text(chunks: list) -> str:
    """What the app drew so far, escape sequences removed."""
    raw = b"".join(chunks).decode("utf-8", "replace")
    return ANSI.sub("", raw)


class Session:
    """One tab: fetch the page, connect its websocket, collect what the app draws."""

    def __init__(self, http, base: str):
        self.http, self.base, self.chunks, self.ws, self.status = http, base, [], None, None

    async def open(self, width: int = 100, height: int = 30) -> None:
        async with self.http.get(self.base + "/") as response:
            self.status = response.status
            page = await response.text()
        if response.status != 200:
            self.page = page
            return
        url = re.search(r'data-session-websocket-url="([^"]+)"', page).group(1)
        self.ws = await self.http.ws_connect(f"{url}?width={width}&height={height}")
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            if isinstance(message.data, bytes):
                self.chunks.append(message.data)

    def text(self) -> str:
        return screen_text(self.chunks)

    async def wait_for(self, needle: str, timeout: float) -> float:
        """Seconds until ``needle`` is on screen (TimeoutError after ``timeout``)."""
        start = time.monotonic()
        while needle not in self.text():
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"{needle!r} not drawn within {timeout} s")
            await asyncio.sleep(0.1)
        return time.monotonic() - start

    async def keys(self, text: str) -> None:
        await self.ws.send_str(json.dumps(["stdin", text]))

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self._reader.cancel()


async def wait_children(pid: int, count: int, timeout: float) -> float:
    """Seconds until the server has ``count`` app processes (TimeoutError after ``timeout``)."""
    start = time.monotonic()
    while len(children(pid)) != count:
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"{len(children(pid))} app processes, expected {count}")
        await asyncio.sleep(0.2)
    return time.monotonic() - start


async def torch_loaded(pid: int, timeout: float) -> list[int]:
    """The app processes that have loaded torch, once at least one has (or [] after ``timeout``)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        loaded = [child for child in children(pid) if has_torch(child)]
        if loaded:
            return loaded
        await asyncio.sleep(0.2)
    return []


async def classroom(sessions: int, timeout: float) -> dict:
    """Open ``sessions`` tabs at once, wait for every home screen, measure, then close them."""
    import aiohttp

    proc, base = start_server(sessions)
    try:
        async with aiohttp.ClientSession() as http:
            tabs = [Session(http, base) for _ in range(sessions)]
            started = time.monotonic()
            await asyncio.gather(*(tab.open() for tab in tabs))
            paint = await asyncio.gather(*(tab.wait_for(HOME_MARK, timeout) for tab in tabs))
            all_painted = time.monotonic() - started
            pids = children(proc.pid)
            idle = [memory_mb(pid) for pid in pids]
            torch_at_home = sum(has_torch(pid) for pid in pids)
            # one student opens the sandbox: that session alone loads the engine and torch
            await tabs[0].keys("s")
            await tabs[0].wait_for("no steps yet", timeout)
            with_torch = await torch_loaded(proc.pid, timeout)
            sandbox = memory_mb(with_torch[0]) if with_torch else {}
            extra = Session(http, base)
            await extra.open()
            for tab in tabs:
                await tab.close()
            freed = await wait_children(proc.pid, 0, timeout)
    finally:
        stop_server(proc)
    return {
        "sessions": sessions,
        "processes": len(pids),
        "all_painted_s": round(all_painted, 2),
        "paint_s": {"median": round(statistics.median(paint), 2), "max": round(max(paint), 2)},
        "home_pss_mb": {"median": round(statistics.median(m["pss"] for m in idle), 1),
                        "max": round(max(m["pss"] for m in idle), 1)},
        "home_rss_mb": {"median": round(statistics.median(m["rss"] for m in idle), 1)},
        "sessions_with_torch_at_home": torch_at_home,
        "sandbox_session_with_torch": len(with_torch),
        "sandbox_pss_mb": round(sandbox.get("pss", 0), 1),
        "sandbox_rss_mb": round(sandbox.get("rss", 0), 1),
        "tab_past_the_cap": {"status": extra.status, "says_full": "The class is full" in getattr(extra, "page", "")},
        "all_processes_gone_after_close_s": round(freed, 2),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=180)
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(classroom(args.sessions, args.timeout)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
