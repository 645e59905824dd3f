"""Each session's app is held to the class's memory budget (issue 53), driven from outside
on 127.0.0.1: ``serve --memory-mb`` is stated in ``serve --help`` with what it allows; the
OS holds each app to it (RLIMIT_AS), so an app that takes memory without end fails alone,
its tab and the teacher's report say why and the server logs one line, while another
student's app answers on; an app that cannot start says so (its "exit" no longer closes the
tab with code 1000 and no reason); and what a tab types is bounded by the budget before any
allocation (a host pool of 2,000,001 slots took an app from 41 to 1,310 MB in a second)."""
from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from serve_attack_helpers import as_teacher, teacher_key
from serve_helpers import load, teacher_home

from radixviz.classroom.starts import APP_STOPPED, START_FAILED
from radixviz.settings import session_caps

pytestmark = pytest.mark.slow
WAIT = 180                      # hang guards: an app starts in seconds, on a busy machine in more
HUNGRY = Path(__file__).with_name("hungry_app.py")
BUDGET_MB = 1024


def serve(tmp_path, app: str | None = None, *extra: str):
    """``radixviz serve`` with a 1,024 MB budget, as a teacher with a fake HOME runs it,
    every session running ``app`` (a shell command) instead of radixviz when given."""
    teacher = teacher_home(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("RADIXVIZ_DATA_DIR", "XDG_DATA_HOME")}
    env["HOME"] = str(teacher.home)
    if app is not None:
        env["RADIXVIZ_SERVE_APP"] = app
    proc, base = load.start_server(3, "--memory-mb", str(BUDGET_MB), *extra, env=env)
    return teacher, proc, base


class Tab:
    """A student's tab that reads until the server closes it: what was drawn, the close."""

    def __init__(self, base: str, name: str) -> None:
        self.student = load.Session(base, name)
        self.drawn, self.closed = "", asyncio.get_running_loop().create_future()

    async def open(self) -> None:
        tab = self.student
        await tab.join()
        async with tab.http.get(tab.base + "/") as response:
            page = await response.text()
        url = re.search(r'data-session-websocket-url="([^"]+)"', page).group(1)
        self.ws = await tab.http.ws_connect(f"{url}?width=80&height=24", headers=tab.origin)
        asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        raw = b""
        while True:
            message = await self.ws.receive()
            if message.type == aiohttp.WSMsgType.BINARY:
                raw += message.data
                self.drawn = load.ANSI.sub("", raw.decode("utf-8", "replace"))
            elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED):
                self.closed.set_result((self.ws.close_code, message.extra))
                return

    async def shows(self, text: str) -> None:
        for _ in range(WAIT * 10):
            if text in self.drawn:
                return
            assert not self.closed.done(), f"closed {self.closed.result()} before {text!r} was drawn"
            await asyncio.sleep(0.1)
        raise AssertionError(f"{text!r} not drawn in {WAIT} s: {self.drawn[-300:]!r}")

    async def keys(self, text: str) -> None:
        await self.ws.send_json(["stdin", text])

    async def close(self) -> None:
        await self.student.close()


def address_space_limit(pid: int) -> int | None:
    """The soft RLIMIT_AS of ``pid`` in bytes (None: unlimited)."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max address space"):
            soft = line.split()[3]
            return None if soft == "unlimited" else int(soft)
    return None


def test_serve_help_states_the_budget_and_what_it_allows():
    done = subprocess.run([sys.executable, "-m", "radixviz", "serve", "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=60)
    caps = session_caps()
    assert done.returncode == 0
    assert "--memory-mb MB" in done.stdout and f"default {caps.memory_mb}" in done.stdout
    assert f"{caps.kv_slots:,} KV slots" in done.stdout and f"history of {caps.history_mb} MB" in done.stdout
    refused = subprocess.run([sys.executable, "-m", "radixviz", "serve", "--memory-mb", "100"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--memory-mb: must be between 1024" in refused.stderr


async def test_an_app_past_its_budget_is_stopped_alone_and_everyone_is_told(tmp_path):
    _, proc, base = serve(tmp_path, f"exec {sys.executable} {HUNGRY}")
    lines: list = []
    key = teacher_key(proc, lines)
    ada, bob = Tab(base, "Ada"), Tab(base, "Bob")
    try:
        await ada.open()
        await bob.open()
        await ada.shows("hungry app ready")
        await bob.shows("hungry app ready")
        apps = load.children(proc.pid)
        assert len(apps) == 2 and all(address_space_limit(pid) == BUDGET_MB << 20 for pid in apps)
        await ada.keys("m")                                   # takes memory until it has none
        code, reason = await asyncio.wait_for(ada.closed, WAIT)
        assert code == APP_STOPPED
        assert reason == f"Your session stopped (it went past its memory budget of {BUDGET_MB:,} MB). " \
                         "Reload: your place is kept."
        await bob.keys("p")
        await bob.shows("pong 1")                              # the other student's app answers on
        assert len(load.children(proc.pid)) == 1
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/teacher", headers=as_teacher(key)) as response:
                page = await response.text()
        assert f"app stopped 1× in the last 10 min: it went past its memory budget of {BUDGET_MB:,} MB" in page
    finally:
        await ada.close()
        await bob.close()
        load.stop_server(proc)
    log = lines + proc.stdout.readlines()
    said = [line for line in log if "app stopped" in line]
    assert len(said) == 1 and "memory budget" in said[0], log
    assert not any("Traceback" in line for line in log), log


async def test_an_app_that_fails_as_it_starts_says_why(tmp_path):
    _, proc, base = serve(tmp_path, f"exec {sys.executable} {HUNGRY} crash")
    lines: list = []
    key = teacher_key(proc, lines)
    ada = Tab(base, "Ada")
    try:
        await ada.open()
        code, reason = await asyncio.wait_for(ada.closed, WAIT)
        # Textual paints its first (empty) frame before on_mount fails: a start that drew
        # nothing is "could not start", one that drew a frame "stopped"; either way, why
        assert code in (START_FAILED, APP_STOPPED), (code, reason)
        assert "RuntimeError: the app's own start failed here" in reason
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/teacher", headers=as_teacher(key)) as response:
                page = await response.text()
        assert "app stopped 1× in the last 10 min: exited with code 1: RuntimeError" in page
    finally:
        await ada.close()
        load.stop_server(proc)
    log = lines + proc.stdout.readlines()
    assert len([line for line in log if "app stopped" in line]) == 1, log


async def test_a_host_pool_past_the_budget_is_refused_before_it_is_allocated(tmp_path):
    _, proc, base = serve(tmp_path)
    ada = Tab(base, "Ada")
    caps = session_caps(BUDGET_MB)
    try:
        await ada.open()
        await ada.shows(load.HOME_MARK)
        await ada.keys("s")
        await ada.shows("no steps yet")
        await ada.keys(":")
        await asyncio.sleep(0.4)                    # the command line opens before it takes keys
        await ada.keys('engine hicache; host-size 2000001; insert "abc"\r')
        await ada.shows("holds at most")
        [app] = load.children(proc.pid)
        peak = int(re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{app}/status").read_text()).group(1)) << 10
        assert peak < 600 << 20, f"the app took {peak >> 20} MB"
        assert f"{caps.kv_slots - 128:,} host slots" in " ".join(ada.drawn.split())
    finally:
        await ada.close()
        load.stop_server(proc)
