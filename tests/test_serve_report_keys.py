"""The teacher's report safe to project (issue 41), driven from outside on 127.0.0.1:
personal links masked, "show link" for one row, "new link" (the old key 404s at once, the
student's live session ends, their progress stays), keys that expire, and a teacher key
kept across restarts and replaced with --new-teacher-key."""
from __future__ import annotations

import asyncio
import json
import re

import aiohttp
import pytest

from serve_attack_helpers import join, roster, teacher_key
from serve_helpers import TEACHER_PROGRESS, load, start, teacher_home

pytestmark = pytest.mark.slow


def browser() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def report(http, base: str) -> str:
    async with http.get(f"{base}/teacher") as response:
        assert response.status == 200
        return await response.text()


async def post(http, base: str, path: str, page: str, name: str) -> aiohttp.ClientResponse:
    """Press a row's button on the report (its form: the page's CSRF token, the row's handle)."""
    row = next(line for line in page.split("<tr") if f"<td>{name}" in line)
    csrf = re.search(r'name="csrf" value="([^"]+)"', row).group(1)
    handle = re.search(rf'action="{path}".*?name="student" value="([^"]+)"', row, re.S).group(1)
    return await http.post(base + path, data={"csrf": csrf, "student": handle}, headers={"Origin": base})


async def test_masked_links_show_link_and_new_link_keeps_progress(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2)
    ada, http, bob = load.Session(base, "Ada"), browser(), browser()
    try:
        key = teacher_key(proc)
        await ada.open()
        assert (await join(bob, base, "Bob"))[0] == 200
        ids = {name: k for k, name in roster(teacher.classroom).items()}
        (teacher.classroom / "students" / ids["Ada"] / "progress.json").write_text(json.dumps(TEACHER_PROGRESS))
        await ada.wait_for("radixviz", 120)                 # a hang guard: her session is live
        async with http.get(f"{base}/teacher?key={key}") as response:
            page = await response.text()
        assert not any(k in page for k in ids.values()), "a student's key in full on the report"
        assert f"/?student={ids['Ada'][:3]}…" in page and "last 30 days" in page
        async with await post(http, base, "/teacher/show", page, "Ada") as response:
            shown = await response.text()
        assert f"{base}/?student={ids['Ada']}" in shown and ids["Bob"] not in shown
        async with await post(http, base, "/teacher/new-link", page, "Ada") as response:
            assert response.status == 200 and "A new personal link" in await response.text()
        await asyncio.wait_for(ada._reader, 60)              # her live session ended (hang guard)
        assert ada.closed[0] == 4005
        now = {name: k for k, name in roster(teacher.classroom).items()}
        assert now["Bob"] == ids["Bob"] and now["Ada"] != ids["Ada"]
        async with aiohttp.ClientSession() as stranger:
            async with stranger.get(f"{base}/?student={ids['Ada']}", allow_redirects=False) as response:
                assert response.status == 404
            async with stranger.get(f"{base}/?student={now['Ada']}", allow_redirects=False,
                                    headers={"Sec-Fetch-Site": "none"}) as response:
                assert response.status == 303
        page = await report(http, base)
        ada_row = next(line for line in page.split("<tr") if "<td>Ada" in line)
        assert '<td class="n">1</td>' in ada_row                # her lesson, in her moved folder
        assert (teacher.classroom / "students" / now["Ada"] / "progress.json").exists()
    finally:
        await ada.close()
        await http.close()
        await bob.close()
        load.stop_server(proc)


async def test_an_expired_link_says_so(tmp_path):
    teacher = teacher_home(tmp_path)
    old, new = "o" * 24, "n" * 24
    teacher.classroom.mkdir(parents=True)
    (teacher.classroom / "students.json").write_text(json.dumps({   # a fixed clock: issued long ago
        old: {"name": "Old", "joined": "2020-01-01T00:00:00Z", "issued": "2020-01-01T00:00:00Z"},
        new: {"name": "New", "joined": "2020-01-01T00:00:00Z", "issued": "2099-01-01T00:00:00Z"}}))
    proc, base = start(teacher, 2, "--key-days", "30")
    try:
        async with aiohttp.ClientSession() as http:
            for headers in ({"Sec-Fetch-Site": "none"}, {"Cookie": f"radixviz_student={old}"}):
                path = f"/?student={old}" if "Sec-Fetch-Site" in headers else "/"
                async with http.get(base + path, headers=headers, allow_redirects=False) as response:
                    text = await response.text()
                assert response.status == 410 and "has expired" in text and "ask your teacher" in text
            async with http.get(f"{base}/?student={new}", headers={"Sec-Fetch-Site": "none"},
                                allow_redirects=False) as response:
                assert response.status == 303
    finally:
        load.stop_server(proc)


async def test_the_teacher_key_survives_a_restart_until_replaced(tmp_path):
    teacher = teacher_home(tmp_path)
    keys = []
    for extra in ((), (), ("--new-teacher-key",)):
        proc, base = start(teacher, 1, *extra)
        try:
            keys.append(teacher_key(proc))
            async with aiohttp.ClientSession() as http:
                async with http.get(f"{base}/teacher", headers={"Cookie": f"radixviz_teacher={keys[0]}"}) as response:
                    status = response.status
        finally:
            load.stop_server(proc)
        assert status == (200 if keys[-1] == keys[0] else 403)
    assert keys[0] == keys[1] != keys[2]
    assert (teacher.classroom / "teacher-key").stat().st_mode & 0o077 == 0
