"""A session whose app cannot start says so (issue 41), driven from outside on 127.0.0.1:
every session's app is a command that writes an error and exits 1 (RADIXVIZ_SERVE_APP, as
a broken install would), and the tab's websocket closes with the message the page shows,
the server logs it, and the teacher's report marks the student."""
from __future__ import annotations

import asyncio
import os
import re

import aiohttp
import pytest

from serve_attack_helpers import as_teacher, teacher_key
from serve_helpers import load, teacher_home

from radixviz.classroom.starts import START_SECONDS

pytestmark = pytest.mark.slow
ERROR = "OSError: [Errno 28] No space left on device"


async def test_an_app_that_exits_at_start_closes_the_tab_with_its_error(tmp_path):
    teacher = teacher_home(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("RADIXVIZ_DATA_DIR", "XDG_DATA_HOME")}
    env.update(HOME=str(teacher.home), RADIXVIZ_SERVE_APP=f"echo 'starting' >&2; echo '{ERROR}' >&2; exit 1")
    proc, base = load.start_server(2, env=env)
    lines: list = []
    key = teacher_key(proc, lines)
    tab = load.Session(base, "Ada")
    try:
        await tab.join()
        for _attempt in range(2):
            code, reason, drawn = await asyncio.wait_for(open_until_closed(tab), 60)   # a hang guard
            assert code == 4004 and drawn == 0
            assert reason == f"radixviz could not start: {ERROR}. Reload to try again."
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/teacher", headers=as_teacher(key)) as response:
                page = await response.text()
        assert "could not start 2× in the last 10 min" in page
    finally:
        await tab.close()
        load.stop_server(proc)
    log = lines + proc.stdout.readlines()
    failed = [line for line in log if "could not start" in line]
    assert len(failed) == 2 and ERROR in failed[0], log


async def open_until_closed(tab) -> tuple:
    """Open the student's page and its websocket, read until the server closes it:
    (close code, close reason, frames drawn)."""
    async with tab.http.get(tab.base + "/") as response:
        page = await response.text()
    url = re.search(r'data-session-websocket-url="([^"]+)"', page).group(1)
    drawn = 0
    async with tab.http.ws_connect(f"{url}?width=80&height=24", headers=tab.origin) as ws:
        while True:
            message = await ws.receive()
            if message.type == aiohttp.WSMsgType.BINARY:
                drawn += 1
            elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED):
                return ws.close_code, message.extra, drawn


async def test_an_app_that_draws_nothing_is_ended_after_the_deadline(tmp_path):
    teacher = teacher_home(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("RADIXVIZ_DATA_DIR", "XDG_DATA_HOME")}
    env.update(HOME=str(teacher.home), RADIXVIZ_SERVE_APP="exec sleep 600")
    proc, base = load.start_server(2, env=env)
    tab = load.Session(base, "Ada")
    try:
        await tab.join()
        closed = asyncio.ensure_future(asyncio.wait_for(open_until_closed(tab), 90))  # a hang guard (deadline 20 s)
        apps = await the_apps_started(proc.pid, closed)
        code, reason, drawn = await closed
        assert code == 4004 and drawn == 0
        assert reason == f"radixviz could not start: it drew nothing within {START_SECONDS} s. Reload to try again."
        assert len(apps) == 1
        # its app is ended, not left asleep, and so is its keeper (reaped: nothing at all is
        # left under the server). One look decides and is reported: an ending keeper is
        # first alive without its app, then a zombie, then reaped (a look that found no app,
        # then a second one, once counted the zombie).
        for _ in range(300):                # a hang guard (60 s)
            left = load.under(proc.pid) + [pid for pid, at in apps.items() if load.started(pid) == at]
            if not left:
                break
            await asyncio.sleep(0.2)
        assert left == [], f"still there after 60 s: {load.described(left)}"
    finally:
        await tab.close()
        load.stop_server(proc)


async def the_apps_started(server: int, closed: asyncio.Future) -> dict:
    """The server's app processes (pid: when it started), once it has one (or the tab closed)."""
    found: dict = {}
    while not found and not closed.done():
        found = {pid: load.started(pid) for pid in load.children(server)}
        await asyncio.sleep(0.1)
    return found
