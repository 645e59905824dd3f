"""``radixviz serve`` from where an attacker sits: a raw websocket client and plain HTTP
requests, never a browser that plays by the rules. Each test checks that the teacher's
files (a fake HOME: shell profile, ssh keys, a secret, their own progress) are as they
were, and that no tab got a byte of them back.

Slow: each class starts a server and app processes (torch loads in each sandbox).
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys

import pytest

from serve_helpers import SECRET, everything_received, load, start, teacher_home

pytestmark = pytest.mark.slow
WAIT = 180
CTRL_S, CTRL_O, CTRL_A, CTRL_K, ESC, ENTER = "\x13", "\x0f", "\x01", "\x0b", "\x1b", "\r"


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """A class of 6 on loopback, served from an empty folder: (teacher, base url, process)."""
    tmp = tmp_path_factory.mktemp("class")
    teacher = teacher_home(tmp)
    cwd = tmp / "where-serve-runs"
    cwd.mkdir()
    proc, base = start(teacher, 6, cwd=cwd)
    before = teacher.files()
    yield teacher, base, proc, cwd
    load.stop_server(proc)
    assert teacher.files() == before, "a tab changed the teacher's files"


async def keys(tab, *parts: str, pause: float = 0.4) -> None:
    """Send each part as one keystroke message, with a pause (an ESC must stand alone)."""
    for part in parts:
        await tab.keys(part)
        await asyncio.sleep(pause)


async def sandbox(tab) -> None:
    await tab.open(width=120, height=36)
    await tab.wait_for(load.HOME_MARK, WAIT)
    await tab.keys("s")
    await tab.wait_for("no steps yet", WAIT)


class TestTheDoor:
    async def test_another_hosts_name_is_refused(self, classroom):
        _, base, _, _ = classroom
        tab = load.Session(base)
        try:
            async with tab.http.get(base + "/", headers={"Host": "evil.example.com"}) as response:
                assert response.status == 421
            async with tab.http.get(base + "/") as response:
                assert response.status == 200 and "Join the class" in await response.text()
        finally:
            await tab.close()

    async def test_another_origin_gets_no_session_nor_a_student(self, classroom):
        teacher, base, proc, _ = classroom
        # an earlier test's app may still be ending (told to quit, through its keeper)
        earlier = set(load.children(proc.pid))
        tab = load.Session(base)
        try:
            async with tab.http.post(base + "/join", data={"name": "Eve"},
                                     headers={"Origin": "http://evil.example.com"}) as response:
                assert response.status == 403
            await tab.join()
            async with tab.http.get(base + "/") as response:
                url = load.re.search(r'data-session-websocket-url="([^"]+)"', await response.text()).group(1)
            with pytest.raises(load_error()) as refused:
                await tab.http.ws_connect(url, headers={"Origin": "http://evil.example.com"})
            assert refused.value.status == 403
            with pytest.raises(load_error()):   # without any Origin (not a browser page) too
                await tab.http.ws_connect(url.replace("/ws/", "/ws/x"))
            assert set(load.children(proc.pid)) <= earlier, "a refused connection started an app"
            names = [s["name"] for s in json.loads((teacher.classroom / "students.json").read_text()).values()]
            assert "Eve" not in names
        finally:
            await tab.close()

    async def test_made_up_reused_and_borrowed_tickets_are_refused(self, classroom):
        _, base, proc, _ = classroom
        ann, bob = load.Session(base), load.Session(base)
        try:
            await ann.join()
            await bob.join()
            # the server is shared by the module: an app of an earlier test may still be ending
            earlier = set(load.children(proc.pid))
            ws_base = base.replace("http", "ws")
            with pytest.raises(load_error()):
                await ann.http.ws_connect(ws_base + "/ws/not-a-ticket", headers=ann.origin)
            async with ann.http.get(base + "/") as response:
                url = load.re.search(r'data-session-websocket-url="([^"]+)"', await response.text()).group(1)
            with pytest.raises(load_error()):      # Ann's ticket in Bob's browser
                await bob.http.ws_connect(url, headers=bob.origin)
            with pytest.raises(load_error()):      # and, used up, not even Ann's any more
                await ann.http.ws_connect(url, headers=ann.origin)
            started = set(load.children(proc.pid)) - earlier
            assert not started, f"a refused ticket started an app: {sorted(started)}"
        finally:
            await ann.close()
            await bob.close()

    async def test_the_teacher_page_needs_its_key(self, classroom):
        _, base, _, _ = classroom
        tab = load.Session(base)
        try:
            for path in ("/teacher", "/teacher?key=guess", "/teacher.csv?key="):
                async with tab.http.get(base + path) as response:
                    assert response.status == 403
        finally:
            await tab.close()


def load_error():
    import aiohttp
    return aiohttp.WSServerHandshakeError


class TestAServedSessionOpensNoPathOfTheTeacher:
    async def test_save_is_a_download_and_writes_nothing_the_tab_names(self, classroom):
        teacher, base, _, cwd = classroom
        tab, other = load.Session(base), load.Session(base)
        try:
            await sandbox(tab)
            await keys(tab, ":", 'insert "$(touch ~/pwned)"', ENTER)
            await tab.wait_for("step 1/", WAIT)
            await keys(tab, ESC, CTRL_S)
            await tab.wait_for("Save the session", WAIT)
            await keys(tab, CTRL_A + CTRL_K, "~/.bashrc", ENTER)
            delivered = await tab.deliveries(WAIT)
            assert delivered, "no download was offered"
            status, body = await tab.download(delivered[0])
            assert status == 200 and body.decode() == ('# saved from the radixviz sandbox\n'
                                                       'insert "$(touch ~/pwned)"\n')
            await other.join()                       # another student cannot fetch it
            assert (await other.download(delivered[0]))[0] == 404
            saved = list(teacher.classroom.rglob("bashrc.rv"))
            assert len(saved) == 1 and "scripts" in saved[0].parts
            assert not (teacher.home / "pwned").exists()

            # open: a pick among this session's own scripts, never a typed path
            await keys(tab, CTRL_O)
            await tab.wait_for("Open a script of this session", WAIT)
            mark = len(tab.chunks)
            await keys(tab, *"/home/secret.txt", ENTER)
            await tab.wait_for("ran 1 operation(s) from the script", WAIT, after=mark)

            # export: the SVG comes as a download, nothing is written where serve runs
            if shutil.which("dot") is None:
                pytest.skip("the export part needs Graphviz's dot: apt-get install graphviz")
            await keys(tab, "e")
            svg = (await tab.deliveries(WAIT, count=2))[1]
            status, body = await tab.download(svg)
            assert status == 200 and body.lstrip().startswith((b"<?xml", b"<svg"))
            assert list(cwd.iterdir()) == []
            assert SECRET not in everything_received(tab, other)
        finally:
            await tab.close()
            await other.close()

    async def test_caps_on_what_one_tab_can_ask(self, classroom):
        _, base, proc, _ = classroom
        earlier = set(load.children(proc.pid))   # an earlier test's app may still be ending
        tab = load.Session(base)
        try:
            await sandbox(tab)
            [pid] = set(load.children(proc.pid)) - earlier
            # 10,000 operations pasted into one line: refused before any is applied
            await keys(tab, ":", "; ".join(['insert "ab"'] * 10_000), ENTER)
            await tab.wait_for("at most 20 operations at once here", WAIT)
            assert load.memory_mb(pid)["rss"] < 800
            # a 10000x10000 terminal is drawn at most 300x100
            await keys(tab, ESC)
            mark = len(tab.chunks)
            await tab.resize(10_000, 10_000)
            await asyncio.sleep(3)
            assert sum(len(c) for c in tab.chunks[mark:]) < 3_000_000
        finally:
            await tab.close()


class TestPlaces:
    async def test_page_loads_reserve_nothing_and_the_cap_holds(self, tmp_path):
        teacher = teacher_home(tmp_path)
        proc, base = start(teacher, 1, "--per-client", "5")
        tabs = [load.Session(base) for _ in range(3)]
        try:
            await tabs[0].join()
            for _ in range(5):                      # curl-style page loads: no app, no place taken
                async with tabs[0].http.get(base + "/") as response:
                    assert response.status == 200
            await tabs[1].open()
            await tabs[1].wait_for(load.HOME_MARK, WAIT)
            await tabs[2].open()                    # past the cap of 1
            assert tabs[2].status == 503 and "The class is full" in tabs[2].page
        finally:
            for tab in tabs:
                await tab.close()
            load.stop_server(proc)

    async def test_one_computer_holds_at_most_its_share(self, tmp_path):
        teacher = teacher_home(tmp_path)
        proc, base = start(teacher, 5, "--per-client", "1")
        first, second = load.Session(base), load.Session(base)
        try:
            await first.open()
            await first.wait_for(load.HOME_MARK, WAIT)
            await second.open()
            for _ in range(1200):   # 120 s: only a hang guard, the refusal comes at once
                if second.closed:
                    break
                await asyncio.sleep(0.1)
            assert second.closed and second.closed[0] == 4002
            assert len(load.children(proc.pid)) == 1
        finally:
            await first.close()
            await second.close()
            load.stop_server(proc)

    async def test_off_loopback_a_class_code_is_needed(self, tmp_path):
        teacher = teacher_home(tmp_path)
        proc, base = start(teacher, 2, "--code", "room-42-code")
        tab = load.Session(base)
        try:
            async with tab.http.get(base + "/") as response:
                assert response.status == 403 and "needs its link" in await response.text()
            async with tab.http.get(base + "/?class=wrong-code-x") as response:
                assert response.status == 403
            async with tab.http.get(base + "/?class=room-42-code") as response:
                assert response.status == 200 and "Join the class" in await response.text()
            await tab.open()
            await tab.wait_for(load.HOME_MARK, WAIT)
        finally:
            await tab.close()
            load.stop_server(proc)


def test_a_non_loopback_host_makes_up_a_code_and_prints_it_in_the_link(tmp_path):
    teacher = teacher_home(tmp_path)
    env = {**{k: v for k, v in os.environ.items() if k != "RADIXVIZ_DATA_DIR"}, "HOME": str(teacher.home)}
    port = load.free_port()
    proc = subprocess.Popen([sys.executable, "-m", "radixviz", "serve", "--host", "0.0.0.0", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        first = proc.stdout.readline() + proc.stdout.readline()
    finally:
        load.stop_server(proc)
    assert "?class=" in first and "share this link" in first
