"""Each student their own: two students side by side in one served class. What one solves
is theirs alone, kept across a reconnect, never written to the teacher's progress; the
teacher's report (``serve --report``, its CSV, the teacher's page) shows each one."""
from __future__ import annotations

import asyncio
import csv
import io
import json
import subprocess
import sys

import pytest

from serve_helpers import insert_in_a_new_sandbox, TEACHER_PROGRESS, load, start, teacher_home

pytestmark = pytest.mark.slow
WAIT = 180


async def solve_the_first_challenge(tab) -> None:
    await tab.keys("c")
    await tab.wait_for("A first hit", WAIT)
    await tab.keys("\r")
    await tab.wait_for("operations 0 · par 2", WAIT)
    await tab.wait_for("no steps yet", WAIT)       # the engine has loaded: the keys act
    await tab.keys(":")                     # the input stays open for each line
    await asyncio.sleep(0.4)
    for line in ('insert "Hello_there"', 'match "Hello_world"'):
        await tab.keys(line)
        await asyncio.sleep(0.2)
        await tab.keys("\r")
        await asyncio.sleep(0.6)
    await tab.wait_for("Solved in 2 operations", WAIT)


async def test_two_students_side_by_side(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 4)
    ada, bob = load.Session(base, "Ada"), load.Session(base, "Bob")
    try:
        await ada.open(width=120, height=40)
        await bob.open(width=120, height=40)
        await asyncio.gather(ada.wait_for(load.HOME_MARK, WAIT), bob.wait_for(load.HOME_MARK, WAIT))
        await solve_the_first_challenge(ada)

        # Bob's list: nothing solved; Ada's own progress file has it; the teacher's is as it was
        await bob.keys("c")
        await bob.wait_for("A first hit", WAIT)
        await bob.wait_for("par 2", WAIT)
        assert "✓ 2/2" not in bob.text()
        students = {s["name"]: key for key, s in json.loads((teacher.classroom / "students.json").read_text()).items()}
        ada_progress = json.loads((teacher.classroom / "students" / students["Ada"] / "progress.json").read_text())
        assert ada_progress["challenges"]["first-hit"]["solved"] is True
        assert not (teacher.classroom / "students" / students["Bob"] / "progress.json").exists()
        assert json.loads((teacher.data / "progress.json").read_text()) == TEACHER_PROGRESS

        # Ada closes her tab and comes back: the same browser is still Ada, her solve still there
        await ada.ws.close()
        ada.ws, ada.chunks = None, []
        await ada.open(width=120, height=40)
        await ada.wait_for(load.HOME_MARK, WAIT)
        await ada.keys("c")
        await ada.wait_for("A first hit", WAIT)
        await ada.wait_for("✓ 2/2", WAIT)

        # Bob types in the sandbox and his tab closes before he saves: the next sandbox offers it back
        mark = len(bob.chunks)
        await bob.keys("\x1b")
        await bob.wait_for(load.HOME_MARK, WAIT, after=mark)
        await asyncio.sleep(0.5)
        await insert_in_a_new_sandbox(bob, WAIT)
        await bob.ws.close()
        await load.wait_children(proc.pid, 1, WAIT)      # his app process is gone
        bob.ws, bob.chunks = None, []
        await bob.open(width=120, height=40)
        await bob.wait_for(load.HOME_MARK, WAIT)
        await bob.keys("s")
        await bob.wait_for("Unsaved work found", WAIT)
        await bob.keys("r")
        await bob.wait_for("restored 1 operation(s)", WAIT)

        # the teacher's page and its CSV: one row each
        report = proc_report(teacher)
        assert report["Ada"]["challenges_solved"] == "1" and report["Bob"]["challenges_solved"] == "0"
        key = next(line for line in iter_output(proc) if "teacher?key=" in line).split("key=")[1].strip()
        async with ada.http.get(f"{base}/teacher?key={key}") as response:
            page = await response.text()
        assert response.status == 200 and "Ada" in page and "Bob" in page
        async with ada.http.get(f"{base}/teacher.csv?key={key}") as response:
            rows = list(csv.DictReader(io.StringIO(await response.text())))
        assert {r["name"]: r["challenges_solved"] for r in rows} == {"Ada": "1", "Bob": "0"}
    finally:
        await ada.close()
        await bob.close()
        load.stop_server(proc)


_OUTPUT: dict = {}


def iter_output(proc):
    """The server's first lines (the links it printed), read once."""
    if proc not in _OUTPUT:
        lines = []
        while len(lines) < 3:
            lines.append(proc.stdout.readline())
        _OUTPUT[proc] = lines
    return _OUTPUT[proc]


def proc_report(teacher) -> dict:
    """``radixviz serve --report --csv`` as the teacher runs it: name -> row."""
    done = subprocess.run([sys.executable, "-m", "radixviz", "serve", "--report", "--csv"], capture_output=True,
                          text=True, timeout=120, env={"HOME": str(teacher.home), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return {row["name"]: row for row in csv.DictReader(io.StringIO(done.stdout))}


def test_a_damaged_student_file_is_named_in_the_report_and_the_others_count(tmp_path):
    from radixviz.classroom.students import Roster, class_rows
    roster = Roster(tmp_path / "class")
    ada, _ = roster.join("Ada"), roster.join("Bob")
    (roster.home(ada) / "progress.json").write_text('{"version": 1, "lessons": {"x": {"predicted": "no"}, '
                                                    '"eviction": {"predicted": [2, 3]}}}')
    rows = {r["name"]: r for r in class_rows(roster)}
    assert rows["Ada"]["lessons_completed"] == 1 and rows["Ada"]["predictions_right"] == 2
    assert "damaged record" in rows["Ada"]["warning"] and rows["Bob"]["lessons_completed"] == 0
    with pytest.raises(Exception, match="already in this class"):
        roster.join("ada")
