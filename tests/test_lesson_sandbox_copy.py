"""Undo and typing in a lesson go to a sandbox copy; the lesson keeps its own operations,
so every prediction is answered on the tree the learner sees.

The case of the issue: lesson 1, answer the first prediction, End, u, back, → to the next
prediction: "3" must be right because the tree painted after its operations has three
nodes, not because the file says so while the screen shows one.
"""
import re

import pytest

from radixviz.lessons import Predict, load_lessons
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.dialogs import ConfirmLeave
from radixviz.tui.screens.lesson import LessonScreen
from radixviz.tui.screens.side_sandbox import LessonCopy
from tui_helpers import answer_docked, dock_shown, painted_text, screen_rows, wait_ready, wait_until

LESSON_1 = load_lessons()[0]
EDGE = re.compile(r"[├└]── .*?'(.*?)'")


def painted_edges(app) -> list[str]:
    """The edges of the tree pane as painted, top to bottom."""
    return [m.group(1) for row in painted_text(app, "#tree-pane") for m in [EDGE.search(row)] if m]


def painted(app) -> str:
    return " ".join(" ".join(screen_rows(app)).split())


NODES_AFTER_THERE = next(b for b in LESSON_1.blocks if isinstance(b, Predict)
                         and "Hello_there" in b.question and "how many nodes" in b.question)


async def press_until(pilot, condition, key="right", limit=300) -> None:
    """Press ``key`` until ``condition()`` holds (what is painted); fail after ``limit``."""
    for _ in range(limit):
        if condition():
            return
        await pilot.press(key)
    pytest.fail("the lesson never got there")


async def to_the_nodes_question(app, pilot) -> None:
    """Walk on, answering the other predictions right, to the one that counts the nodes
    after "Hello_there"."""
    for _ in range(300):
        if dock_shown(app):
            if app.screen.walk.waiting is NODES_AFTER_THERE:
                return
            await answer_docked(app, pilot)
        else:
            await pilot.press("right")
    pytest.fail("the nodes question never came")


def verdict_painted(app, predict) -> bool:
    """Whether the lesson pane paints "✓ you predicted it." with ``predict``'s explanation."""
    painted_page = " ".join(" ".join(painted_text(app, "#lesson-pane")).split())
    return f"✓ you predicted it. {' '.join(predict.explain.split())[:40]}" in painted_page


async def test_undo_in_a_lesson_leaves_the_lessons_tree_and_grading_alone():
    app = RadixvizApp("lesson", lesson=LESSON_1, device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        lesson_screen = app.screen
        await press_until(pilot, lambda: dock_shown(app))
        await pilot.press("a")                         # 1 node: right
        await pilot.press("end")
        assert painted_edges(app) == ["Hello_L.A.!"]
        await pilot.press("u")                         # undo: into a sandbox copy
        await wait_until(pilot, lambda: isinstance(app.screen, LessonCopy) and app.screen.model)
        await pilot.pause()
        assert "sandbox copy" in painted(app) and "h Lesson" in painted(app)
        assert painted_edges(app) == [], "the copy took the insert back"
        await pilot.press("h")                         # back to the lesson, where it was left
        assert app.screen is lesson_screen
        assert painted_edges(app) == ["Hello_L.A.!"], "the lesson's own tree is untouched"

        await to_the_nodes_question(app, pilot)
        await pilot.press("abc"[NODES_AFTER_THERE.choices.index("3")])
        await press_until(pilot, lambda: verdict_painted(app, NODES_AFTER_THERE)
                          or any(r.startswith("✗") for r in painted_text(app, "#lesson-pane")))
        # the answer the learner gave is what the painted tree shows, and is graded right
        assert sorted(painted_edges(app)) == ["Hello_", "L.A.!", "there"]
        assert verdict_painted(app, NODES_AFTER_THERE)


async def test_typing_in_a_lesson_happens_in_a_copy_that_asks_before_dropping_it():
    app = RadixvizApp("lesson", lesson=LESSON_1, device="cpu")
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_ready(app, pilot)
        lesson_screen = app.screen
        await press_until(pilot, lambda: dock_shown(app))
        await pilot.press("a", "end", "colon")         # type an operation: a copy opens
        await wait_until(pilot, lambda: isinstance(app.screen, LessonCopy) and app.screen.model)
        await pilot.press(*"insert", "space", *"xyz", "enter", "escape", "end")
        assert "xyz" in painted_edges(app)
        await pilot.press("h")                         # work of the learner's: asked first
        assert isinstance(app.screen, ConfirmLeave)
        await pilot.press("l")
        assert app.screen is lesson_screen and isinstance(app.screen, LessonScreen)
        assert painted_edges(app) == ["Hello_L.A.!"]
        await to_the_nodes_question(app, pilot)
        await pilot.press("abc"[NODES_AFTER_THERE.choices.index("3")])
        await press_until(pilot, lambda: verdict_painted(app, NODES_AFTER_THERE)
                          or any(r.startswith("✗") for r in painted_text(app, "#lesson-pane")))
        assert sorted(painted_edges(app)) == ["Hello_", "L.A.!", "there"]
        assert verdict_painted(app, NODES_AFTER_THERE)
