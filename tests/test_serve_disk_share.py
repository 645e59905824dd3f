"""One disk share for everything a student's session writes (issue 53), driven from outside
on 127.0.0.1: saves made in the app (ctrl+s) went past the class's disk budget, which only
``/upload`` checked (11.2 MB in 106 s against a 5.0 MB share); each save's delivery to the
browser also stayed in the app's memory, fetched or not (+65 MB over 150 saves). Now the
app's writes are held to the student's share where each file is written, and a delivery
the browser has not fetched is dropped once newer ones pile up."""
from __future__ import annotations

import asyncio

import pytest

from serve_attack_helpers import roster
from serve_helpers import load, start, teacher_home

from radixviz.files import folder_bytes

pytestmark = pytest.mark.slow
WAIT = 180
CTRL_S, CTRL_A, CTRL_K, ENTER, ESC = "\x13", "\x01", "\x0b", "\r", "\x1b"
SHARE = 25_000                 # --disk-mb 1 --max-students 40
# two lines of 19 keys of 91 tokens (a typed line has at most 2,000 characters): 3.9 kB a save
LINES = ["; ".join(f'insert "{chr(97 + i)}{row}' + "xyz" * 30 + '"' for i in range(19)) for row in "AB"]


async def save_as(tab: load.Session, home, name: str) -> str:
    """ctrl+s, the name typed over the suggestion, enter: "saved" once the file is in the
    student's folder, "not saved" once the app says so (once refused, every later save is)."""
    mark = len(tab.chunks)
    for part in (CTRL_S, CTRL_A, CTRL_K, name, ENTER):
        await tab.keys(part)
        await asyncio.sleep(0.3)
    for _ in range(WAIT * 10):
        if (home / "scripts" / name).exists():
            return "saved"
        if "not saved" in load.screen_text(tab.chunks[mark:]):
            return "not saved"
        await asyncio.sleep(0.1)
    raise AssertionError(f"no answer to saving {name}")


async def test_saves_stop_at_the_share_and_unfetched_deliveries_are_dropped(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2, "--disk-mb", "1", "--max-students", "40")
    ada = load.Session(base, "Ada")
    try:
        await ada.open(width=120, height=40)
        await ada.wait_for(load.HOME_MARK, WAIT)
        await ada.keys("s")
        await ada.wait_for("no steps yet", WAIT)
        await ada.keys(":")
        await asyncio.sleep(0.4)
        for line in LINES:
            mark = len(ada.chunks)
            await ada.keys(line + ENTER)
            await ada.wait_for("step ", WAIT, after=mark)
            await asyncio.sleep(0.5)
        await ada.keys(ESC)
        await asyncio.sleep(0.5)
        home = teacher.classroom / "students" / next(iter(roster(teacher.classroom)))
        answers = [await save_as(ada, home, f"s{n}.rv") for n in range(1, 7)]
        assert answers == ["saved"] * 6
        # none fetched: the first deliveries were dropped as newer ones came, the last is there
        keys = await ada.deliveries(WAIT, count=6)
        assert len(keys) == 6
        assert (await ada.download(keys[0]))[0] == 404
        status, newest = await ada.download(keys[-1])
        assert status == 200 and newest.count(b"insert ") == 38
        # more saves: refused once the student's folder would pass their share
        answers = [await save_as(ada, home, f"more{n}.rv") for n in range(1, 4)]
        assert "not saved" in answers and answers[answers.index("not saved"):] == ["not saved"] * (
            len(answers) - answers.index("not saved"))
        assert "your folder is full" in ada.text()
        assert folder_bytes(home) <= SHARE
        # the work goes on (nothing is lost), only its autosave cannot grow the folder
        await ada.keys(":")
        await asyncio.sleep(0.4)
        mark = len(ada.chunks)
        await ada.keys('insert "more"' + ENTER)
        await ada.wait_for("more", WAIT, after=mark)
        await asyncio.sleep(1)
        assert folder_bytes(home) <= SHARE
    finally:
        await ada.close()
        load.stop_server(proc)
