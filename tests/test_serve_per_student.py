"""Caps that follow the student (issue 41), driven from outside on 127.0.0.1: a room behind
one address (a proxy, a school's NAT) is many students, so sessions are capped per student,
with a per-address flood guard above them; and --trust-proxy takes the client's address
from X-Forwarded-For only when the request comes from that proxy."""
from __future__ import annotations

import asyncio

import pytest
from yarl import URL

from serve_attack_helpers import join
from serve_helpers import load, start, teacher_home
from test_serve_joins import from_address

pytestmark = pytest.mark.slow
WAIT = 120          # a hang guard: an app's first frame on a loaded machine


async def test_two_students_from_one_address_each_hold_three_sessions(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 8, "--per-client", "60")      # the defaults: 3 per student, 60 per address
    ada = [load.Session(base, "Ada") for _ in range(4)]
    bob = [load.Session(base, "Bob") for _ in range(3)]
    try:
        for tabs in (ada, bob):
            await tabs[0].join()
            for tab in tabs[1:]:        # the same student's browser: its cookie
                tab.http.cookie_jar.update_cookies(tabs[0].http.cookie_jar.filter_cookies(URL(base)))
        for tab in ada[:3] + bob:
            await tab.open()
            assert tab.ws is not None, tab.page
            await tab.wait_for(load.HOME_MARK, WAIT)
        await ada[3].open()                         # Ada's fourth: refused, the others go on
        await asyncio.wait_for(ada[3]._reader, 60)
        assert ada[3].closed[0] == 4002
        assert len(load.children(proc.pid)) == 6
        assert all(tab.closed is None for tab in ada[:3] + bob)
    finally:
        for tab in ada + bob:
            await tab.close()
        load.stop_server(proc)


async def test_a_trusted_proxy_passes_the_clients_address_and_no_one_else_does(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2, "--joins-per-minute", "1", "--trust-proxy", "127.0.0.2")
    proxy, other = from_address("127.0.0.2"), from_address("127.0.0.3")
    try:
        # through the proxy: each client its own joins (the last address is the one the proxy saw)
        for name, forwarded, status in (("Ada", "10.0.0.1", 200), ("Bob", "10.0.0.2", 200),
                                        ("Cy", "10.0.0.1", 429), ("Dee", "10.0.0.1, 10.0.0.3", 200)):
            assert (await join(proxy, base, name, **{"X-Forwarded-For": forwarded}))[0] == status, name
        # not the proxy: the header is not believed
        assert (await join(other, base, "Eve", **{"X-Forwarded-For": "10.0.0.7"}))[0] == 200
        assert (await join(other, base, "Fay", **{"X-Forwarded-For": "10.0.0.8"}))[0] == 429
    finally:
        await proxy.close()
        await other.close()
        load.stop_server(proc)
