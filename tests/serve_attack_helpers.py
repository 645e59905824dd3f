"""What the classroom tests that play an attacker share: a client that keeps no cookies
(each request a stranger), the teacher's key read from what the server printed, and a
join by name as a form post from the server's own page would send it."""
from __future__ import annotations

import json

import aiohttp


def stranger() -> aiohttp.ClientSession:
    """An HTTP client keeping no cookie: every request comes from nobody the server knows."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())


def teacher_key(proc, lines: list | None = None) -> str:
    """The teacher's key in the links the server printed when it started (its first lines)."""
    lines = [] if lines is None else lines
    while not any("teacher?key=" in line for line in lines):
        line = proc.stdout.readline()
        assert line, "the server printed no teacher link"
        lines.append(line)
    return next(line for line in lines if "teacher?key=" in line).split("key=")[1].strip()


def as_teacher(key: str) -> dict:
    """The headers of the teacher's browser once ``/teacher?key=`` swapped the key for its
    cookie (for a client keeping no cookies: ``/teacher?key=`` only redirects)."""
    return {"Cookie": f"radixviz_teacher={key}"}


async def join(http: aiohttp.ClientSession, base: str, name: str, **headers) -> tuple[int, str]:
    """``POST /join`` with the server's own Origin (a form on its page): (status, page)."""
    async with http.post(base + "/join", data={"name": name}, headers={"Origin": base, **headers}) as response:
        return response.status, await response.text()


def roster(classroom) -> dict:
    """The names in the class folder's students.json: id -> name."""
    path = classroom / "students.json"
    if not path.exists():
        return {}
    return {key: value["name"] for key, value in json.loads(path.read_text()).items()}
