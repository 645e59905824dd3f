"""The README's five-minute tour, run as written: every ``radixviz`` line of its code blocks,
through the real command line, in a folder holding the repository's ``examples/``. A command
that opens the app runs it headless at 120×40, and a Pilot does what the tour tells the
reader to do (``→``, ``b``, typing an operation) and reads what the screen shows.

A tour line the checks below do not know fails the test, and so does a check whose command
the tour no longer has: change the two together.
"""
from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tui_helpers import narration, screen_rows, status, tree_text, wait_until

ROOT = Path(__file__).resolve().parents[1]


def tour_commands() -> list[str]:
    """The ``radixviz`` lines of the README's tour section's code blocks, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = re.search(r"^## A five-minute tour\n(.*?)^## ", text, re.S | re.M)
    assert tour, "the README has no '## A five-minute tour' section"
    blocks = re.findall(r"^```\n(.*?)^```", tour.group(1), re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines() if line.startswith("radixviz ")]


# ------------------------------------------------------------------ what the reader does in the app

async def ready(app, pilot) -> None:
    from radixviz.tui.app import wait_until_ready
    await wait_until_ready(app, pilot)


async def the_7_bug(app, pilot) -> None:
    await ready(app, pilot)
    await pilot.press("end")                      # → to the end: the match
    assert "match_prefix returns 6 token(s)" in narration(app)
    await pilot.press("b")                        # the matcher before #7
    assert "match_prefix returns 11 token(s)" in narration(app)
    assert "✗ 'world'" in tree_text(app)


async def a_lesson(app, pilot) -> None:
    from radixviz.lessons import find_lesson, load_lessons
    await ready(app, pilot)
    title = find_lesson(load_lessons(), "2").title
    assert any(title[:40] in row for row in screen_rows(app)), title
    await pilot.press("right")                    # → reads on
    assert app.is_running


async def the_sandbox(app, pilot) -> None:
    await ready(app, pilot)
    typed = re.search(r"type `(insert [^`]*)`", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert typed, "the tour's sandbox step names no operations to type"
    await pilot.press("colon", *typed.group(1), "enter", "escape", "end")
    tree = tree_text(app)
    assert "● 'Hello_'" in tree                   # locked, so it stays
    assert "† evicted 'world'" in tree and "† evicted 'there'" in tree
    assert "error" not in status(app).lower()


async def a_server(app, pilot) -> None:
    """The recording plays back: the tree rebuilt from its events, its prompts' text on screen."""
    def shown() -> str:
        return "\n".join(screen_rows(app))
    await wait_until(pilot, lambda: "'The capital of'" in shown() and "' France is Paris'" in shown())


AppDrive = Callable[[object, object], Awaitable[None]]
# each tour command: what the reader does in the app it opens (None: it prints), and a check
# of what it printed or wrote
CHECKS: dict[str, tuple[AppDrive | None, Callable[[str, Path], None]]] = {
    "radixviz sandbox examples/chapter.rv": (the_7_bug, lambda out, here: None),
    "radixviz lesson 2": (a_lesson, lambda out, here: None),
    "radixviz sandbox": (the_sandbox, lambda out, here: None),
    "radixviz export examples/chapter.rv -o tree.svg":
        (None, lambda out, here: (here / "tree.svg").read_text().startswith("<?xml")),
    "radixviz export examples/chapter.rv -o steps.html":
        (None, lambda out, here: "wrote steps.html (21 steps)" in out and
         "match_prefix returns 6 token(s)" in (here / "steps.html").read_text()),
    "radixviz simulate --workload few-shot --compare lpm,fcfs --pool-size 768":
        (None, lambda out, here: re.search(r"lpm .*%\n\s+fcfs .*%", out) is not None),
    "radixviz watch --file examples/kv-events.rvkv": (a_server, lambda out, here: None),
}


def test_the_tour_and_its_checks_name_the_same_commands():
    assert tour_commands() == list(CHECKS)


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    """A fresh folder to run the tour in, its ``examples/`` the repository's."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", list(CHECKS))
def test_each_tour_command_runs_as_written(command, here, cli, monkeypatch):
    if "export" in command and shutil.which("dot") is None:
        pytest.skip("needs Graphviz's dot: apt-get install graphviz")
    drive, check = CHECKS[command]
    failures: list[BaseException] = []
    if drive is not None:
        from textual.app import App
        run = App.run

        def headless(app, *args, **kwargs):
            async def pilot_does(pilot):
                try:
                    await drive(app, pilot)
                except BaseException as exc:   # noqa: BLE001 - re-raised below, outside the app
                    failures.append(exc)
                app.exit()
            return run(app, headless=True, size=(120, 40), auto_pilot=pilot_does)
        monkeypatch.setattr(App, "run", headless)
    code, out, err = cli(*shlex.split(command)[1:])
    if failures:
        raise failures[0]
    assert code == 0, err
    assert check(out, here) is not False, out[-2000:]
