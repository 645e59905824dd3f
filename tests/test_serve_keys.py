"""Keys that survive a projector (issue 41), driven from outside the server on 127.0.0.1:
the teacher's key and a student's personal link leave the address bar at their first use
(a cookie, then a redirect to a clean URL), and no page reached after holds a key."""
from __future__ import annotations

import re

import aiohttp
import pytest

from serve_attack_helpers import join, roster, teacher_key
from serve_helpers import load, start, teacher_home

pytestmark = pytest.mark.slow


def browser() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


def links(page: str) -> list[str]:
    """Every address a page links to or posts to, and every hidden form value."""
    return re.findall(r'(?:href|action|src|value|data-[a-z-]+)="([^"]*)"', page)


async def test_the_teachers_key_is_swapped_for_a_cookie_and_the_page_holds_no_key(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2)
    http = browser()
    try:
        key = teacher_key(proc)
        assert (await join(http, base, "Ada"))[0] == 200
        async with http.get(f"{base}/teacher?key={key}", allow_redirects=False) as response:
            assert response.status == 303 and response.headers["Location"] == "/teacher"
            cookie = response.headers["Set-Cookie"]
        assert key in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        async with http.get(f"{base}/teacher", allow_redirects=False) as response:
            assert response.status == 200
            page = await response.text()
        assert "Ada" in page and key not in page
        assert links(page) and not any(key in link for link in links(page))
        csv = next(link for link in links(page) if "csv" in link)
        async with http.get(base + csv) as response:
            assert response.status == 200 and "Ada" in await response.text()
        # the page's remove form works with the cookie and its token; without the token, refused
        ada = next(iter(roster(teacher.classroom)))
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        for form, status in (({"student": ada}, 403), ({"student": ada, "csrf": csrf}, 303)):
            async with http.post(f"{base}/teacher/remove", data=form, headers={"Origin": base},
                                 allow_redirects=False) as response:
                assert response.status == status
                assert key not in response.headers.get("Location", "")
        assert ada not in roster(teacher.classroom)
        async with aiohttp.ClientSession() as nobody:      # no cookie: still refused
            async with nobody.get(f"{base}/teacher") as response:
                assert response.status == 403
    finally:
        await http.close()
        load.stop_server(proc)


async def test_a_personal_link_ends_on_a_clean_page_with_no_key(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2)
    first, typed, other = browser(), browser(), browser()
    try:
        assert (await join(first, base, "Bea"))[0] == 200
        assert (await join(other, base, "Cy"))[0] == 200
        bea = next(k for k, name in roster(teacher.classroom).items() if name == "Bea")
        # pasted into a fresh browser: bound at once, and the address bar ends on /
        async with typed.get(f"{base}/?student={bea}", headers={"Sec-Fetch-Site": "none"},
                             allow_redirects=False) as response:
            assert response.status == 303 and response.headers["Location"] == "/"
        async with typed.get(base + "/") as response:
            page = await response.text()
        assert "data-session-websocket-url" in page and bea not in page
        # opened in a browser that is someone else: the confirmation, then a clean /
        async with other.get(f"{base}/?student={bea}") as response:
            confirm = await response.text()
        assert bea not in confirm
        token = re.search(r'name="token" value="([^"]+)"', confirm).group(1)
        async with other.post(f"{base}/link", data={"token": token}, headers={"Origin": base},
                              allow_redirects=False) as response:
            assert response.status == 303 and response.headers["Location"] == "/"
        async with other.get(base + "/") as response:
            page = await response.text()
        assert "Bea" in page and bea not in page and not any(bea in link for link in links(page))
    finally:
        for http in (first, typed, other):
            await http.close()
        load.stop_server(proc)


async def test_the_class_link_ends_on_a_clean_page_with_no_code(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2, "--code", "room-42-code")
    http = browser()
    try:
        async with http.get(f"{base}/?class=room-42-code", allow_redirects=False) as response:
            assert response.status == 303 and response.headers["Location"] == "/"
        async with http.get(base + "/") as response:
            page = await response.text()
        assert "join" in page.lower() and "room-42-code" not in page
    finally:
        await http.close()
        load.stop_server(proc)
