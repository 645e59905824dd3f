"""Joins the teacher controls, driven from outside: a client keeping no cookie floods
``POST /join`` (refused past the joins an address may make in a minute, while a student at
another address still joins), a full roster (``--max-students``) the teacher frees by
removing a squatter from their page, and the disk budget (``--disk-mb``, each student's
share of it) refusing uploads, with what each student uses on the teacher's page."""
from __future__ import annotations

import asyncio

import aiohttp
import pytest

from serve_attack_helpers import as_teacher, join, roster, stranger, teacher_key
from serve_helpers import load, start, teacher_home

pytestmark = pytest.mark.slow
SCRIPT_LINE = 'insert "' + "a" * 40 + '"\n'
SCRIPT = (SCRIPT_LINE * (99_600 // len(SCRIPT_LINE))).encode()      # 99,600 bytes: under the 100 kB cap


def from_address(address: str, cookies: bool = False) -> aiohttp.ClientSession:
    """A client whose connections come from ``address`` (any of 127.0.0.0/8 is this machine)."""
    jar = aiohttp.CookieJar(unsafe=True) if cookies else aiohttp.DummyCookieJar()
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0)), cookie_jar=jar)


async def test_a_join_flood_from_one_address_is_cut_off_and_others_still_join(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2, "--joins-per-minute", "10")
    flood, student = stranger(), from_address("127.0.0.2")
    try:
        statuses = []
        for batch in range(10):                     # 80 made-up names, eight at a time
            statuses += [s for s, _ in await asyncio.gather(*(
                join(flood, base, f"bot {batch}-{i}") for i in range(8)))]
        assert statuses.count(200) == 10 and statuses.count(429) == 70
        status, page = await join(flood, base, "bot late")
        assert status == 429 and "try again in" in page
        assert (await join(student, base, "Real Student"))[0] == 200
        assert len(roster(teacher.classroom)) == 11
    finally:
        await flood.close()
        await student.close()
        load.stop_server(proc)


async def test_the_teacher_sets_the_roster_size_and_removes_a_squatter(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2, "--max-students", "5")
    http = stranger()
    try:
        for name in ("Ada", "Bob", "Cy", "Dee", "Alice"):            # "Alice" taken by a squatter
            assert (await join(http, base, name))[0] == 200
        status, page = await join(http, base, "Eve")
        assert status == 400 and "already has 5 students" in page
        status, page = await join(http, base, "Alice")
        assert status == 400 and "already in this class" in page
        key = teacher_key(proc)
        async with http.get(f"{base}/teacher", headers=as_teacher(key)) as response:
            page = await response.text()
        assert "at most 5 students" in page and "10 joins per address per minute" not in page
        assert "connections at once" in page and "32 per address" in page
        squatter = next(k for k, name in roster(teacher.classroom).items() if name == "Alice")
        assert (teacher.classroom / "students" / squatter).is_dir()
        form = {"key": key, "student": squatter}
        # another site's page, a missing Origin, a wrong key: refused
        for headers, data in (({"Origin": "http://evil.example"}, form), ({}, form),
                              ({"Origin": base}, {**form, "key": "guess"})):
            async with http.post(f"{base}/teacher/remove", data=data, headers=headers,
                                 allow_redirects=False) as response:
                assert response.status == 403
        async with http.post(f"{base}/teacher/remove", data=form, headers={"Origin": base},
                             allow_redirects=False) as response:
            assert response.status == 303
        assert squatter not in roster(teacher.classroom)
        assert not (teacher.classroom / "students" / squatter).exists()
        assert (await join(http, base, "Alice"))[0] == 200            # the real Alice
    finally:
        await http.close()
        load.stop_server(proc)


async def upload(http, base: str, name: str) -> tuple[int, str]:
    async with http.post(f"{base}/upload", data=SCRIPT, headers={"Origin": base, "X-File-Name": name}) as response:
        return response.status, await response.text()


async def test_the_disk_budget_stops_uploads_and_the_teacher_sees_it(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2, "--disk-mb", "1", "--max-students", "2")   # 500 kB each
    ada, bob = from_address("127.0.0.1", cookies=True), from_address("127.0.0.2", cookies=True)
    try:
        await join(ada, base, "Ada")
        await join(bob, base, "Bob")
        statuses = [(await upload(ada, base, f"s{i}.rv"))[0] for i in range(8)]
        assert statuses == [200] * 5 + [507] * 3
        status, text = await upload(ada, base, "more.rv")
        assert status == 507 and "your folder is full" in text
        assert [(await upload(bob, base, f"b{i}.rv"))[0] for i in range(5)] == [200] * 5
        key = teacher_key(proc)
        async with ada.get(f"{base}/teacher", headers=as_teacher(key)) as response:
            page = await response.text()
        assert "1.0 MB used of 1.0 MB" in page and page.count("0.5 MB") >= 3     # the total's share and each row
    finally:
        await ada.close()
        await bob.close()
        load.stop_server(proc)
    # the teacher restarts with room for one student only: the class's folder is full
    proc, base = start(teacher, 2, "--disk-mb", "1", "--max-students", "1")
    ada = from_address("127.0.0.1", cookies=True)
    try:
        ada_key = next(k for k, name in roster(teacher.classroom).items() if name == "Ada")
        async with ada.get(f"{base}/?student={ada_key}", headers={"Sec-Fetch-Site": "none"}) as response:   # pasted
            assert response.status == 200
        status, text = await upload(ada, base, "last.rv")
        assert status == 507 and "class's folder is full" in text
    finally:
        await ada.close()
        load.stop_server(proc)
