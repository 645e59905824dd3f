"""Any request, from anyone (issue 53): a secret of any bytes is only a wrong secret (403;
``secrets.compare_digest`` raised TypeError on non-ASCII text: HTTP 500 and a 170-line
traceback drawn on the event loop), and every response carries the page's protective
headers (a Content-Security-Policy that runs no inline script, no framing, nosniff, a
Referrer-Policy). Driven with raw HTTP on 127.0.0.1, bytes as an attacker sends them."""
from __future__ import annotations

import asyncio
import re
from urllib.parse import urlsplit

import pytest

from serve_attack_helpers import teacher_key
from serve_helpers import load, start, teacher_home

pytestmark = pytest.mark.slow
CODE = "class-code-7f3a"


def served(tmp):
    """A class with a class code, as a teacher serves it: (base url, process, log lines, key)."""
    teacher = teacher_home(tmp)
    proc, base = start(teacher, 2, "--code", CODE)
    lines: list = []
    return base, proc, lines, teacher_key(proc, lines)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    base, proc, lines, key = served(tmp_path_factory.mktemp("class"))
    yield base, proc, lines, key
    load.stop_server(proc)


async def raw(base: str, request: bytes) -> tuple[int, dict, bytes]:
    """Send ``request`` (its bytes as given) and read the answer: (status, headers, body)."""
    parts = urlsplit(base)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 30)          # Connection: close
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *fields = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (f.partition(":") for f in fields)}
    return int(status_line.split()[1]), headers, body


def get(base: str, target: bytes, *headers: bytes) -> bytes:
    host = urlsplit(base).netloc.encode()
    return b"GET " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n" + \
        b"".join(h + b"\r\n" for h in headers) + b"\r\n"


def post(base: str, target: bytes, body: bytes, *headers: bytes) -> bytes:
    host = urlsplit(base).netloc.encode()
    return (b"POST " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\nOrigin: "
            + base.encode() + b"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body)


class TestSecretsOfAnyBytes:
    async def test_each_is_refused_as_a_wrong_one_and_nothing_is_drawn_in_the_log(self, tmp_path):
        base, proc, lines, key = served(tmp_path)      # its own: the test ends it to read its whole log
        code = f"Cookie: radixviz_class={CODE}".encode()
        for name, request in {
            "teacher key é in the query": get(base, b"/teacher?key=%C3%A9"),
            "teacher key of a lone byte": get(base, b"/teacher?key=%FF%FE"),
            "teacher cookie é": get(base, b"/teacher.csv", b"Cookie: radixviz_teacher=\xc3\xa9"),
            "class code é in a link": get(base, b"/?class=%C3%A9"),
            "class cookie é": get(base, b"/", b"Cookie: radixviz_class=\xc3\xa9"),
            "class cookie é on a websocket": get(base, b"/ws/anything", b"Cookie: radixviz_class=\xc3\xa9",
                                                 b"Origin: " + base.encode(), b"Upgrade: websocket",
                                                 b"Connection: Upgrade", b"Sec-WebSocket-Version: 13",
                                                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="),
            "teacher form key é": post(base, b"/teacher/remove", b"key=%C3%A9&student=x", code),
            "teacher form csrf é": post(base, b"/teacher/new-link", b"csrf=%C3%A9&student=%C3%A9", code,
                                        f"Cookie: radixviz_teacher={key}".encode()),
        }.items():
            status, _, _ = await raw(base, request)
            assert status == 403, f"{name}: HTTP {status}"
        # raw bytes past ASCII in the request line: aiohttp's parser refuses them itself
        assert (await raw(base, get(base, b"/teacher?key=\xc3\xa9")))[0] == 400
        await asyncio.sleep(0.5)                      # the log's thread writes what was queued
        proc.send_signal(2)                            # Ctrl+C: the server writes its last lines and ends
        proc.wait(30)
        log = lines + proc.stdout.readlines()
        assert not [line for line in log if "Traceback" in line or "TypeError" in line], log
        # one line in all: aiohttp's own, for the request line it could not parse
        assert len([line for line in log if line.startswith("ERROR")]) == 1, log


class TestProtectiveHeaders:
    async def test_every_response_carries_them(self, classroom):
        base, _, _, key = classroom
        cookie = f"Cookie: radixviz_class={CODE}".encode()
        as_teacher = f"Cookie: radixviz_teacher={key}".encode()
        _, joined, _ = await raw(base, post(base, b"/join", b"name=Ada", cookie))
        student = joined["set-cookie"].split(";")[0].encode()
        answers = {
            "the app's page": await raw(base, get(base, b"/", cookie + b"; " + student)),
            "the join page": await raw(base, get(base, b"/", cookie)),
            "a refusal (no class code)": await raw(base, get(base, b"/")),
            "the teacher's page refused": await raw(base, get(base, b"/teacher")),
            "the teacher's page": await raw(base, get(base, b"/teacher", as_teacher)),
            "the teacher's redirect": await raw(base, get(base, f"/teacher?key={key}".encode())),
            "textual's script": await raw(base, get(base, b"/static/js/textual.js")),
            "the page's script": await raw(base, get(base, b"/assets/app.js")),
            "no such page": await raw(base, get(base, b"/nothing-here")),
            "a refused form": await raw(base, post(base, b"/join", b"name=Bea")),
        }
        assert b"data-session-websocket-url" in answers["the app's page"][2]
        host = urlsplit(base).netloc
        for name, (status, headers, _) in answers.items():
            policy = headers.get("content-security-policy", "")
            assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy, f"{name} ({status})"
            assert f"connect-src 'self' ws://{host} wss://{host}" in policy
            # only the app's page lets its terminal write <style> elements; no page runs inline script
            assert ("style-src 'self' 'unsafe-inline'" in policy) == (name == "the app's page"), name
            assert headers.get("x-frame-options") == "DENY", name
            assert headers.get("x-content-type-options") == "nosniff", name
            assert headers.get("referrer-policy") == "same-origin", name

    async def test_no_page_holds_inline_script_or_style(self, classroom):
        base, _, _, key = classroom
        tab = load.Session(base, "Bea")
        try:
            async with tab.http.get(f"{base}/?class={CODE}") as response:
                assert response.status == 200
            await tab.join()
            async with tab.http.get(base + "/") as response:
                app = await response.text()
            async with tab.http.get(f"{base}/teacher", headers={"Cookie": f"radixviz_teacher={key}"}) as response:
                report = await response.text()
        finally:
            await tab.close()
        assert "data-session-websocket-url" in app and "Class report" in report
        for page in (app, report, tab.page):
            assert not re.search(r"<script(?![^>]*\bsrc=)", page), "an inline script"
            assert not re.search(r"<style|\sstyle=|\son[a-z]+=", page), "an inline style or event handler"
