"""A student's app that dies is reported and restarted where the student was (issue 39),
driven from outside on 127.0.0.1: Ada's sandbox holds an operation, her app process is
killed (``os.kill``, as the kernel's OOM killer would), her tab is closed with why, the
server logs one line, the teacher's page marks her, and her next visit starts a new app
that offers her unsaved work back. The other students' sessions go on."""
from __future__ import annotations

import asyncio
import os
import signal

import aiohttp
import pytest

from serve_attack_helpers import as_teacher, roster, teacher_key
from serve_helpers import insert_in_a_new_sandbox, load, start, teacher_home, until

from radixviz.classroom.starts import APP_STOPPED, MAX_REASON, how_it_ended, stopped

pytestmark = pytest.mark.slow
WAIT = 180          # hang guards: the engine loads torch in each app


async def test_a_killed_app_is_reported_and_the_next_visit_restarts_it_where_it_was(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 3)
    lines: list = []
    key = teacher_key(proc, lines)
    ada, bob = load.Session(base, "Ada"), load.Session(base, "Bob")
    try:
        await ada.open(width=120, height=40)
        await ada.wait_for(load.HOME_MARK, WAIT)
        [ada_app] = load.children(proc.pid)
        await bob.open(width=120, height=40)
        await bob.wait_for(load.HOME_MARK, WAIT)
        await insert_in_a_new_sandbox(ada, WAIT)
        ada_id = next(sid for sid, name in roster(teacher.classroom).items() if name == "Ada")
        autosaves = teacher.classroom / "students" / ada_id / "autosave"
        await until(lambda: list(autosaves.glob("sandbox-*.rv")))      # her place, kept as she went

        os.kill(ada_app, signal.SIGKILL)
        await asyncio.wait_for(ada._reader, WAIT)                       # the server closes her tab
        assert ada.ws.close_code == APP_STOPPED
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/teacher", headers=as_teacher(key)) as response:
                page = await response.text()
        assert "app stopped 1× in the last 10 min" in page
        assert await bob.answer_time("?") < WAIT                          # Bob's session goes on

        ada.ws, ada.chunks = None, []
        await ada.open(width=120, height=40)                             # her next visit: a new app
        await ada.wait_for(load.HOME_MARK, WAIT)
        assert ada_app not in load.children(proc.pid)
        await ada.keys("s")
        await ada.wait_for("Unsaved work found", WAIT)
        await ada.keys("r")
        await ada.wait_for("restored 1 operation(s)", WAIT)
    finally:
        await ada.close()
        await bob.close()
        load.stop_server(proc)
    log = lines + proc.stdout.readlines()
    ended = [line for line in log if "app stopped" in line]
    assert len(ended) == 1 and "killed by SIGKILL" in ended[0], log


def test_the_close_message_says_how_and_fits_a_close_frame():
    assert how_it_ended(-9, b"") == "killed by SIGKILL"
    assert how_it_ended(1, b"Traceback ...\nMemoryError\n") == "exited with code 1: MemoryError"
    long = how_it_ended(1, ("x" * 500).encode())
    message = stopped(long)
    assert len(message) <= MAX_REASON and message.decode().endswith("Reload: your place is kept.")
    assert stopped("killed by SIGKILL") == b"Your session stopped (killed by SIGKILL). Reload: your place is kept."
