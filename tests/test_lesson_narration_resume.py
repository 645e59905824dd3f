"""A lesson in the app as a learner meets it: the step's own explanation first, the text
that belongs to the frame shown, a ✓ at home once done, and resuming where they left."""
import pytest
from rich.console import Console

from radixviz.lessons import load_lessons
from radixviz.lessons.progress import Progress
from radixviz.script import explain
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.home import HomeScreen
from radixviz.tui.screens.predict import PredictScreen
from radixviz.tui.screens.resume import ResumeScreen
from tui_helpers import narration, wait_ready

LESSONS = load_lessons()


def visible_narration(app) -> str:
    """The narration as it stands in its pane: only the lines that fit without scrolling."""
    pane = app.screen.query_one("#narration-pane")
    body = app.screen.query_one("#narration-body")
    console = Console(width=body.content_region.width or pane.size.width, color_system=None,
                      record=True, file=open("/dev/null", "w"))
    console.print(body.content)
    lines = console.export_text().splitlines()
    return " ".join(" ".join(lines[:pane.content_region.height]).split())


async def until(pilot, condition, what: str):
    """Let the app run until ``condition()`` holds (the engine loads in a worker)."""
    for _ in range(500):
        if condition():
            return
        await pilot.pause(0.02)
    pytest.fail(f"never happened: {what}")


async def open_lesson(app, pilot, lesson):
    app.open_lesson(lesson)
    await until(pilot, lambda: getattr(app.screen, "player", None) is not None
                or isinstance(app.screen, (ResumeScreen, PredictScreen)), "the lesson loaded")


async def step_to_first_operation(app, pilot):
    for _ in range(60):
        if isinstance(app.screen, PredictScreen):
            await pilot.press("escape")
        elif app.screen.model.frame is not None and app.screen.model.frame.kind != "op":
            return
        else:
            await pilot.press("right")
    pytest.fail("no operation step reached")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_what_the_step_did_and_why_come_first_and_fit(size):
    lesson = LESSONS[3]          # eviction: long narrative blocks
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        await step_to_first_operation(app, pilot)
        for _ in range(4):       # a few steps in, each with its own why
            frame = app.screen.model.frame
            why = " ".join(explain(frame).split())
            shown = visible_narration(app)
            if why:
                assert why[:40] in shown, (size, frame.kind, shown)
            await pilot.press("right")


async def test_the_first_step_shows_its_own_text_not_a_later_answer():
    lesson = LESSONS[0]
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        stepper = app.screen
        for _ in range(300):
            if isinstance(app.screen, PredictScreen):
                await pilot.press("escape")
                continue
            if stepper.player.done and stepper.model.at_end:
                break
            await pilot.press("right_square_bracket")
        assert "Answer: 3." in narration(app) or stepper.player.index > 0
        await pilot.press("home")
        text = narration(app)
        assert "Answer: 3." not in text, "the first step shows the text it ran with"
        assert "Answer: 1." in text            # the prediction its own operation answers
        assert "eleven-token prompt" in " ".join(text.split())


async def test_a_finished_lesson_has_a_tick_at_home_and_a_left_one_resumes():
    first, second = LESSONS[0], LESSONS[1]
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        home = app.screen
        await open_lesson(app, pilot, first)
        stepper = app.screen
        for _ in range(300):
            if isinstance(app.screen, PredictScreen):
                await pilot.press("escape")
                continue
            if stepper.player.done and stepper.model.at_end:
                break
            await pilot.press("right_square_bracket")
        await pilot.press("h")
        assert app.screen is home
        prompts = [str(home.query_one("OptionList").get_option_at_index(i).prompt)
                   for i in range(home.query_one("OptionList").option_count)]
        assert any(p.startswith(f"Lesson 1: {first.title}") and p.endswith("✓") for p in prompts)
        assert not any(p.startswith("Lesson 2:") and p.endswith("✓") for p in prompts)

        await open_lesson(app, pilot, second)   # play part of lesson 2, then leave
        stepper = app.screen
        while stepper.player.index < 4:
            if isinstance(app.screen, PredictScreen):
                await pilot.press("escape")
                continue
            await pilot.press("right_square_bracket")
        left_at, ran = stepper.player.index, len(stepper.model.session.records)
        await pilot.press("h")
        assert Progress.load().positions[second.id]["block"] == left_at

        await open_lesson(app, pilot, second)   # opening it again offers to resume
        assert isinstance(app.screen, ResumeScreen)
        await pilot.press("enter")           # "Resume" is the first option
        await pilot.pause()
        stepper = app.screen
        assert stepper.player.index == left_at
        assert len(stepper.model.session.records) == ran
