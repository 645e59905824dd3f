"""``radixviz serve --report --csv`` as the teacher runs it, on a class where a student typed
a formula for a name: empty cells stay empty, a cell that a spreadsheet would run as a
formula is quoted."""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

from radixviz.classroom.students import Roster


def report(folder) -> str:
    env = {k: v for k, v in os.environ.items() if k != "RADIXVIZ_DATA_DIR"}
    done = subprocess.run([sys.executable, "-m", "radixviz", "serve", "--report", "--csv", "--class-dir",
                           str(folder)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_empty_cells_are_empty_and_formulas_are_quoted(tmp_path):
    roster = Roster(tmp_path / "class")
    roster.join("Ada")                              # nothing done yet: lessons, challenges, best quiz empty
    for name in ("=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)"):
        roster.join(name)
    rows = list(csv.DictReader(io.StringIO(report(tmp_path / "class"))))
    ada = next(r for r in rows if r["name"] == "Ada")
    assert ada["lessons"] == "" and ada["challenges"] == "" and ada["best_quiz_percent"] == ""
    names = sorted(r["name"] for r in rows if r["name"] != "Ada")
    assert names == sorted(["'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)"])
    # no cell of any row is a lone quote
    assert all(cell != "'" for r in rows for cell in r.values())
