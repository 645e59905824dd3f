"""How the app looks: SVG snapshots at a fixed size (pytest --snapshot-update regenerates).

The code pane shows a fixed line here instead of the engine's source, so a comment added
to radix_cache.py does not change every picture; what that pane shows is checked as text
in test_tui_operations. Notifications and timers are kept off screen so the pictures are
deterministic.
"""
from __future__ import annotations

import pytest

from rich.text import Text

from radixviz.lessons import Lesson
from radixviz.tui.app import RadixvizApp
from radixviz.tui.widgets.code_pane import CodePane
from tui_helpers import CHAPTER, wait_ready

SIZE = (100, 32)


@pytest.fixture(autouse=True)
def fixed_code_pane(monkeypatch):
    """The code pane names the step instead of showing the engine's lines and numbers."""
    def show(self, source: str, step: str) -> None:
        self.update(Text(f"the engine's code for the step {step!r} (compared as text in "
                         "test_tui_operations, not in pictures)", style="dim"))
    monkeypatch.setattr(CodePane, "show", show)


@pytest.fixture
def fixed_lessons(monkeypatch):
    """Two stand-in lessons, so the home snapshot does not change when lesson texts do."""
    from radixviz.tui.screens import home
    fake = [Lesson("nodes", 1, "What a node holds", "1.md"),
            Lesson("matching", 2, "Matching and the #7 bug", "2.md")]
    monkeypatch.setattr(home, "load_lessons", lambda *a, **k: list(fake))


async def _loaded(pilot):
    await wait_ready(pilot.app, pilot)


def _go_to(kind: str, nth: int = 0):
    """A run_before that shows the ``nth`` frame of ``kind``."""
    async def run_before(pilot):
        await _loaded(pilot)
        screen = pilot.app.screen
        frames = [f.index for f in screen.model.frames if f.kind == kind]
        screen.position = frames[nth]
        await pilot.pause()
    return run_before


def test_home(snap_compare, fixed_lessons):
    assert snap_compare(RadixvizApp("home", device="cpu"), terminal_size=SIZE, run_before=_loaded)


def test_stepper_mid_split(snap_compare, tmp_path):
    app = RadixvizApp("sandbox", script_text=CHAPTER, device="cpu", export_dir=tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=_go_to("split"))


def test_buggy_match(snap_compare, tmp_path):
    script = CHAPTER.replace("match", "matcher buggy\nmatch")
    app = RadixvizApp("sandbox", script_text=script, device="cpu", export_dir=tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=_go_to("result", 2))


def test_help_screen(snap_compare, tmp_path):
    app = RadixvizApp("sandbox", script_text=CHAPTER, device="cpu", export_dir=tmp_path)

    async def run_before(pilot):
        await _loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_stepper_at_80x24(snap_compare, tmp_path):
    """The smallest size the app promises to be usable at."""
    script = CHAPTER.replace("match", "matcher buggy\nmatch")
    app = RadixvizApp("sandbox", script_text=script, device="cpu", export_dir=tmp_path)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_go_to("result", 2))


STAND_IN_LESSON = """---
id: stand-in
number: 1
title: A stand-in lesson
---
# A stand-in lesson

Two prompts that begin the same way share the start of their path in the tree. Insert
two of them and count the nodes.

```predict
question: After inserting "Hello_L.A.!" and "Hello_there", how many nodes are below the root?
choices: 2 | 3 | 4
answer: 3
check: nodes
explain: The shared "Hello_" becomes a node of its own, with "L.A.!" and "there" below it.
```

```radixviz
insert "Hello_L.A.!"
insert "Hello_there"
```

A last paragraph long enough not to fit beside the tree at 80x24, so that a small screen
reads it across its whole width: the tree keeps the half of the screen it had while the
operations ran, and the text gets it back here. Each token of a prompt gets a slot of the
pool; the tree remembers which runs of tokens already have slots, so that the next request
that begins the same way reuses them instead of computing them again. The shared start of
two prompts becomes a node of its own the moment they part ways, and the two remainders hang
below it as its children; neither of them starts with the same token as the other, so a
lookup never has to choose between two children. Press r to see the tree beside this text.
"""


def stand_in_lesson():
    """A lesson of the snapshots' own, so the pictures do not change when lesson texts do."""
    from radixviz.lessons.lesson.parse import parse_lesson
    return parse_lesson(STAND_IN_LESSON, "01-stand-in.md")


def test_lesson_prediction_docked_beside_the_tree(snap_compare):
    app = RadixvizApp("lesson", lesson=stand_in_lesson(), device="cpu")

    async def run_before(pilot):
        await _loaded(pilot)
        await pilot.press("right")
        await pilot.pause()
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_lesson_answer_beside_the_tree_at_80x24(snap_compare):
    """A wrong answer with its reason: short enough to sit beside the tree it is about."""
    app = RadixvizApp("lesson", lesson=stand_in_lesson(), device="cpu")

    async def run_before(pilot):
        await _loaded(pilot)
        await pilot.press("right", "a", "end", "right")
        await pilot.pause()
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_lesson_long_paragraph_read_across_80x24(snap_compare):
    """A paragraph too long for the pane beside the tree: the reading layout."""
    app = RadixvizApp("lesson", lesson=stand_in_lesson(), device="cpu")

    async def run_before(pilot):
        await _loaded(pilot)
        await pilot.press("right", "b", "end", "right", "right")
        await pilot.pause()
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
