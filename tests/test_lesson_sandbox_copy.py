"""Undo and typing in a lesson go to a sandbox copy; the lesson keeps its own operations,
so every prediction is answered on the tree the learner sees.

The case of the issue: lesson 1, answer the first prediction, End, u, back, → to the next
prediction: "3" must be right because the tree painted after its operations has three
nodes, not because the file says so while the screen shows one.
"""
import re

from radixviz.lessons import load_lessons
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.dialogs import ConfirmLeave
from radixviz.tui.screens.lesson import LessonScreen
from radixviz.tui.screens.side_sandbox import LessonCopy
from tui_helpers import dock_shown, painted_text, screen_rows, wait_ready, wait_until

LESSON_1 = load_lessons()[0]
EDGE = re.compile(r"[├└]── .*?'(.*?)'")


def painted_edges(app) -> list[str]:
    """The edges of the tree pane as painted, top to bottom."""
    return [m.group(1) for row in painted_text(app, "#tree-pane") for m in [EDGE.search(row)] if m]


def painted(app) -> str:
    return " ".join(" ".join(screen_rows(app)).split())


async def to_the_next_prediction(app, pilot) -> None:
    while not dock_shown(app):
        await pilot.press("right")


async def to_the_answers(app, pilot) -> None:
    """Step through the operations to their answers (the verdicts painted)."""
    while not any(row.startswith(("✓", "✗")) for row in painted_text(app, "#lesson-pane")):
        await pilot.press("right")


async def test_undo_in_a_lesson_leaves_the_lessons_tree_and_grading_alone():
    app = RadixvizApp("lesson", lesson=LESSON_1, device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        lesson_screen = app.screen
        await to_the_next_prediction(app, pilot)
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

        await to_the_answers(app, pilot)               # the first answer, then on
        await to_the_next_prediction(app, pilot)
        assert "Hello_there" in painted(app)
        await pilot.press("b")                         # "3"
        await pilot.press("end")
        edges = painted_edges(app)
        await to_the_answers(app, pilot)
        verdict = next(r for r in painted_text(app, "#lesson-pane") if r.startswith(("✓", "✗")))
        # the answer the learner gave is what the painted tree shows, and is graded right
        assert len(edges) == 3 and sorted(edges) == ["Hello_", "L.A.!", "there"]
        assert verdict.startswith("✓ you predicted it")


async def test_typing_in_a_lesson_happens_in_a_copy_that_asks_before_dropping_it():
    app = RadixvizApp("lesson", lesson=LESSON_1, device="cpu")
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_ready(app, pilot)
        lesson_screen = app.screen
        await to_the_next_prediction(app, pilot)
        await pilot.press("a", "end", "colon")         # type an operation: a copy opens
        await wait_until(pilot, lambda: isinstance(app.screen, LessonCopy) and app.screen.model)
        await pilot.press(*"insert", "space", *"xyz", "enter", "escape", "end")
        assert "xyz" in painted_edges(app)
        await pilot.press("h")                         # work of the learner's: asked first
        assert isinstance(app.screen, ConfirmLeave)
        await pilot.press("l")
        assert app.screen is lesson_screen and isinstance(app.screen, LessonScreen)
        assert painted_edges(app) == ["Hello_L.A.!"]
        await to_the_answers(app, pilot)
        await to_the_next_prediction(app, pilot)
        await pilot.press("b")
        await to_the_answers(app, pilot)
        assert sorted(painted_edges(app)) == ["Hello_", "L.A.!", "there"]
        assert any(r.startswith("✓ you predicted it") for r in painted_text(app, "#lesson-pane"))
