"""Names that would pass for another's, sent to ``POST /join`` by a client keeping no
cookie: none of them joins as a second "Alice"; the class's rows all read differently, on
the teacher's page and in the CSV; names in other alphabets still join."""
from __future__ import annotations

import csv
import io
import unicodedata

import pytest

from serve_attack_helpers import as_teacher, join, roster, stranger, teacher_key
from serve_helpers import load, start, teacher_home

pytestmark = pytest.mark.slow

LOOK_ALIKES = [
    "\u0410lice",            # a Cyrillic А
    "Ali\u200bce",           # a zero-width space
    "Alice\u202e",           # a right-to-left override
    "\u2067Alice\u2069",     # a right-to-left isolate around it
    "A\u2060lice",           # a word joiner
    "ＡＬＩＣＥ",              # fullwidth
    "\u0410\u04cf\u0456\u0441\u0435",   # all Cyrillic: Аӏісе
    "ALICE",
    "Alice\u3164",           # a Hangul filler, which draws nothing
    "Al\u00ad\u00adice",     # soft hyphens
]
OTHERS = ["Zoë", "Jose\u0301", "Дмитрий", "李小龍", "さくら 山田", "Ελένη", "O'Brien", "김민준"]


async def test_look_alikes_cannot_join_as_another_student(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2)
    http = stranger()
    try:
        assert (await join(http, base, "Alice"))[0] == 200
        for name in LOOK_ALIKES:
            status, page = await join(http, base, name)
            assert status == 400, f"{name!r} joined"
            assert "already in this class" in page or "one alphabet" in page
        for name in OTHERS:
            assert (await join(http, base, name))[0] == 200, name
        names = list(roster(teacher.classroom).values())
        assert sorted(names) == sorted(["Alice", *(unicodedata.normalize("NFKC", n) for n in OTHERS)])
        key = teacher_key(proc)
        async with http.get(f"{base}/teacher.csv?key={key}") as response:
            rows = list(csv.DictReader(io.StringIO(await response.text())))
        assert sorted(r["name"] for r in rows) == sorted(names)
        async with http.get(f"{base}/teacher", headers=as_teacher(key)) as response:
            page = await response.text()
        assert page.count("<td>Alice</td>") == 1         # one row reads "Alice"
        assert not any(unicodedata.category(c) == "Cf" for c in page + "".join(names))
    finally:
        await http.close()
        load.stop_server(proc)
