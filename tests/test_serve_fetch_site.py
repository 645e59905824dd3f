"""What a browser says about where a request comes from (``Origin``, ``Sec-Fetch-Site``),
checked on every request that changes something, from a plain HTTP client keeping no
cookie: a form or a websocket from another port of this host ("same-site") or another site
is refused even with the right Origin, and a personal link opened by anything but the
person (no ``Sec-Fetch-Site: none``) sets no student cookie, only asks."""
from __future__ import annotations

import re

import pytest

from serve_attack_helpers import join, roster, stranger
from serve_helpers import load, start, teacher_home

pytestmark = pytest.mark.slow


async def test_requests_from_elsewhere_change_nothing(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2)
    http = stranger()
    try:
        for where in ("same-site", "cross-site"):
            status, _ = await join(http, base, f"Eve {where}", **{"Sec-Fetch-Site": where})
            assert status == 403
        assert roster(teacher.classroom) == {}
        assert (await join(http, base, "Bea", **{"Sec-Fetch-Site": "same-origin"}))[0] == 200
        bea = next(iter(roster(teacher.classroom)))

        # the link route: asked, never bound, unless the person opened it themselves
        for headers in ({}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
            async with http.get(f"{base}/?student={bea}", headers=headers, allow_redirects=False) as response:
                assert response.status == 200 and "radixviz_student" not in response.headers.getall("Set-Cookie", [])
                text = await response.text()
                assert "Continue as Bea?" in text and response.headers["X-Frame-Options"] == "DENY"
        token = re.search(r'name="token" value="([^"]+)"', text).group(1)
        async with http.get(f"{base}/?student={bea}", headers={"Sec-Fetch-Site": "none"},
                            allow_redirects=False) as response:
            assert response.status == 303 and "radixviz_student=" + bea in response.headers["Set-Cookie"]
        # the confirmation's POST: only from this server's page, once
        for headers in ({"Origin": "http://127.0.0.1:1"}, {"Origin": base, "Sec-Fetch-Site": "same-site"}, {}):
            async with http.post(f"{base}/link", data={"token": token}, headers=headers,
                                 allow_redirects=False) as response:
                assert response.status == 403
        async with http.post(f"{base}/link", data={"token": token}, headers={"Origin": base},
                             allow_redirects=False) as response:
            assert response.status == 303 and "radixviz_student=" + bea in response.headers["Set-Cookie"]
        async with http.post(f"{base}/link", data={"token": token}, headers={"Origin": base},
                             allow_redirects=False) as response:
            assert response.status == 403                       # used up
    finally:
        await http.close()
        load.stop_server(proc)
