"""A front that dies does not take the students' apps with it (issue 39), driven from outside
on 127.0.0.1: Ada's sandbox holds an operation, the server is SIGKILLed, her app is still
running; a server started again on the same class folder sends her next visit to that same
app, which repaints what it showed and answers her keys. Stopping the server ends every
keeper and app; a keeper no server attaches to ends after --detached-timeout."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from serve_attack_helpers import roster
from serve_helpers import insert_in_a_new_sandbox, load, start, teacher_home, until

from radixviz.classroom.keepers import left_behind
from radixviz.classroom.priority import SessionPriorities, set_cores
from radixviz.classroom.server import ClassroomServer

pytestmark = pytest.mark.slow
WAIT = 180          # hang guards: the engine loads torch in each app


def running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def sessions_of(teacher, name: str) -> Path:
    sid = next(sid for sid, shown in roster(teacher.classroom).items() if shown == name)
    return teacher.classroom / "students" / sid / "sessions"


async def ada_with_one_operation(base: str):
    ada = load.Session(base, "Ada")
    await ada.open(width=120, height=40)
    await ada.wait_for(load.HOME_MARK, WAIT)
    await insert_in_a_new_sandbox(ada, WAIT)
    return ada


def kill_front(proc) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


async def test_a_killed_front_leaves_the_app_and_the_next_front_goes_on_with_it(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 3)
    second = None
    ada = bob = None
    try:
        ada = await ada_with_one_operation(base)
        [app] = load.children(proc.pid)
        [keeper] = load.keepers(proc.pid)
        [sock] = sessions_of(teacher, "Ada").glob("*.sock")
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600             # the teacher's alone
        assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
        kill_front(proc)
        await asyncio.wait_for(ada._reader, WAIT)             # her tab lost its server
        assert running(app) and running(keeper)               # her app did not

        second, base2 = start(teacher, 3)
        ada.base, ada.ws, ada.chunks = base2, None, []
        await ada.open(width=120, height=40)                  # her next visit (same cookie)
        await ada.wait_for("step 1/", WAIT)                   # the sandbox as she left it, repainted
        infos = [json.loads(p.read_text()) for p in sessions_of(teacher, "Ada").glob("*.json")]
        assert [info["app"] for info in infos] == [app]       # the same app, no new one
        assert load.children(second.pid) == []               # (the new front started none)
        # and it answers her keys: the input (still open) closes, then the stepper steps on
        # (the repaint between them, or the arrow's bytes would read as alt+right)
        drawn = len(ada.chunks)
        await ada.keys("\x1b")
        await until(lambda: len(ada.chunks) > drawn)
        drawn = len(ada.chunks)
        await ada.keys("\x1b[C")
        await ada.wait_for("step 2/", WAIT, after=drawn)

        bob = load.Session(base2, "Bob")                      # a fresh app under the new front
        await bob.open(width=100, height=30)
        await bob.wait_for(load.HOME_MARK, WAIT)
        [bob_app] = load.children(second.pid)
        [bob_keeper] = load.keepers(second.pid)
    finally:
        for tab in (ada, bob):
            if tab is not None:
                await tab.close()
        if proc.poll() is None:
            load.stop_server(proc)
        if second is not None:
            load.stop_server(second)                          # the class ends normally
    for pid in (app, keeper, bob_app, bob_keeper):
        await until(lambda pid=pid: not running(pid), 30)     # no keeper or app outlives it
    assert not list(sessions_of(teacher, "Ada").glob("*.sock"))


async def test_a_keeper_no_front_attaches_to_ends_after_the_timeout(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2, "--detached-timeout", "3")
    ada = load.Session(base, "Ada")
    try:
        await ada.open(width=100, height=30)
        await ada.wait_for(load.HOME_MARK, WAIT)
        [app] = load.children(proc.pid)
        [keeper] = load.keepers(proc.pid)
        kill_front(proc)
        assert running(app)
        await until(lambda: not running(app) and not running(keeper), 60)   # a hang guard, not a timing
        assert not list(sessions_of(teacher, "Ada").iterdir())              # its socket and pids removed
    finally:
        await ada.close()
        if proc.poll() is None:
            load.stop_server(proc)


def test_a_stale_socket_is_removed(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    old = os.getcwd()
    os.chdir(sessions)                       # a short name: a socket's path is limited
    try:
        dead = socket.socket(socket.AF_UNIX)
        dead.bind("gone.sock")
        dead.close()                         # nothing listens any more
    finally:
        os.chdir(old)
    (sessions / "gone.json").write_text(json.dumps({"keeper": 2**22 + 7, "app": 2**22 + 8}))
    assert left_behind(tmp_path) == {}
    assert not list(sessions.iterdir())


def test_a_new_front_keeps_the_confinement_the_kernel_kept():
    # an app a former front confined to the hog cores stays counted as confined (so it is
    # given its cores back once calm), and one it lowered stays lowered
    watcher = SessionPriorities()
    if not watcher.enabled:
        pytest.skip("one core, or no /proc schedstat: nothing is confined")
    app = subprocess.Popen(["sleep", "60"])
    try:
        set_cores(app.pid, watcher.hog_cores)
        os.setpriority(os.PRIO_PROCESS, app.pid, 19)
        watcher.watch(app.pid)
        assert app.pid in watcher.confined and app.pid in watcher.lowered
        calm = subprocess.Popen(["sleep", "60"])
        try:
            watcher.watch(calm.pid)
            assert calm.pid not in watcher.confined and calm.pid not in watcher.lowered
        finally:
            calm.kill()
            calm.wait()
    finally:
        app.kill()
        app.wait()


def test_apps_left_running_count_in_the_class_cap_but_not_against_their_student(tmp_path):
    server = ClassroomServer("true", host="127.0.0.1", port=0, max_sessions=2, class_dir=tmp_path)
    server.detached = {tmp_path / "a.sock": {"keeper": 1, "app": 2, "student": "ada"},
                       tmp_path / "b.sock": {"keeper": 3, "app": 4, "student": "bob"}}
    assert server.is_full() and server.is_full("cy")
    assert not server.is_full("ada")            # she goes on with hers: no new place needed
