"""A comb as deep as a script can make it, through every command that draws or writes a tree
(issue 52): ``run``, ``run --json``, ``export`` and the sandbox. (``watch`` takes combs of
100,000 levels: tests/test_watch_streams.py.)

A comb is a chain of nodes each with a second child: ``insert "a…aX"`` for every length.
Each level takes an insert whose key reaches it, so a script under the 1 MB cap holds about
1,400 levels; the inserts here go longest first, each splitting the top edge (a walk of one
level), so the comb is built in a few thousand steps. Python's own recursion limit is 1,000:
a walk that recursed per level failed at a few hundred (each level is a node and its children).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui_helpers import needs_dot, stepper, tree_text

ROOT = Path(__file__).resolve().parent.parent
LEVELS = 1_050   # past Python's recursion limit even for a walk that recursed once a level
POOL = 3 * LEVELS + 16
DEEPEST = "a" * LEVELS + "X"


def comb_script(levels: int = LEVELS) -> str:
    return "".join(f'insert "{"a" * k}X"\n' for k in range(levels, 0, -1))


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("comb") / "comb.txt"
    path.write_text(comb_script() + f'match "{DEEPEST}"\n')   # a marked path down the whole comb
    return path


def radixviz(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "radixviz", *argv], capture_output=True, text=True,
                          env=env, timeout=600)


def depth(node: dict) -> int:
    """Levels below ``node`` in run --json's nested tree (walked with a list)."""
    deepest, stack = 0, [(node, 0)]
    while stack:
        at, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in at["children"])
    return deepest


@pytest.mark.slow
class TestACombThroughEveryCommand:
    def test_run_prints_it_folded_and_exits_0(self, script):
        done = radixviz("run", str(script), "--pool-size", str(POOL), "--width", "120")
        assert done.returncode == 0, done.stderr[-2000:]
        assert "recursion" not in done.stderr and "Traceback" not in done.stderr
        assert f"→  {LEVELS + 1} token(s)" in done.stdout and f"root  {2 * LEVELS} tokens" in done.stdout
        # the matched path is drawn to its end (the X under the last a, LEVELS + 1 levels
        # down); its line says how many levels of guides it leaves out instead of starting
        # with thousands of columns of them
        assert f"…{LEVELS - 21:,} levels…" in done.stdout and "▶ current step  ✓ matched" in done.stdout

    def test_run_json_nests_every_level(self, script):
        done = radixviz("run", str(script), "--pool-size", str(POOL), "--json")
        assert done.returncode == 0, done.stderr[-2000:]
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(20_000)   # Python's json reader recurses per level; the writer does not
        try:
            doc = json.loads(done.stdout)
        finally:
            sys.setrecursionlimit(limit)
        assert depth(doc["tree"]) == LEVELS
        assert doc["ops"][-1]["result"]["matched"] == LEVELS + 1

    @needs_dot
    def test_export_draws_it(self, script, tmp_path):
        out = tmp_path / "comb.svg"
        done = radixviz("export", str(script), "--pool-size", str(POOL), "-o", str(out))
        assert done.returncode == 0, done.stderr[-2000:]
        assert out.read_text().count("<g id=\"node") >= 2 * LEVELS

    async def test_the_sandbox_steps_down_the_whole_match(self, tmp_path, script):
        async with stepper(tmp_path, script.read_text(), size=(120, 40), pool_size=POOL) as (app, pilot):
            await pilot.press("end")
            await pilot.pause()
            shown = tree_text(app)
            assert "levels…" in shown and "✓" in shown   # the matched path, drawn to its end
            await pilot.press("left")
            await pilot.pause()
            assert app.return_code in (None, 0)
