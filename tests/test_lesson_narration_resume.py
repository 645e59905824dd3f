"""A lesson in the app as a learner meets it: the lesson's words first and this step's
what-and-why under them, the same text when going back, a ✓ at home once done, and
resuming where they left (esc keeps the place)."""
import pytest

from radixviz.lessons import load_lessons
from radixviz.lessons.progress import Progress
from radixviz.script import explain
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.resume import ResumeScreen
from tui_helpers import (answer_docked, dock_shown, painted_text, screen_rows, settled_text, wait_ready,
                         wait_until, walk_until)

LESSONS = load_lessons()


def joined(rows) -> str:
    return " ".join(" ".join(rows).split())


async def open_lesson(app, pilot, lesson):
    app.open_lesson(lesson)
    await wait_until(pilot, lambda: isinstance(app.screen, ResumeScreen)
                     or (getattr(app.screen, "walk", None) is not None and app.screen.walk.at >= 0))


async def walk_to_the_end(app, pilot) -> None:
    """→ (] while steps show) to the end of the lesson, skipping every prediction (esc)."""
    screen = app.screen
    for _ in range(600):
        if dock_shown(app):
            await pilot.press("escape")
        elif screen.walk.at_end and not any("▼ more" in row for row in screen_rows(app)):
            return
        else:
            await pilot.press("right_square_bracket")
    pytest.fail("the lesson never reached its end")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_lessons_words_come_first_and_the_step_under_them(size):
    lesson = LESSONS[3]          # eviction: long paragraphs
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        await walk_until(app, pilot, lambda: painted_text(app, "#step-pane"))   # the first operation
        lesson_pane = app.screen.query_one("#lesson-pane").region
        step_pane = app.screen.query_one("#step-pane").region
        assert lesson_pane.bottom <= step_pane.y, "the lesson's words sit above this step"
        assert painted_text(app, "#lesson-pane"), "the lesson's words stay in view while stepping"
        for _ in range(4):       # a few steps in, each with its own why, painted
            frame = app.screen.model.frame
            why = " ".join(explain(frame).split())
            if why:
                assert why[:30] in joined(painted_text(app, "#step-pane")), (size, frame.kind)
            await pilot.press("right")


async def test_going_back_shows_the_same_text_again():
    lesson = LESSONS[1]          # matching: a paragraph between a question and its operations
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_ready(app, pilot)
        screen, seen = app.screen, {}
        for _ in range(200):
            if screen.walk.at_end:
                break
            if dock_shown(app):
                await answer_docked(app, pilot)
                continue
            if screen.walk.frames() is None:      # a paragraph or the answers: read them
                if screen.walk.at not in seen:
                    seen[screen.walk.at] = joined(await settled_text(app, pilot, "#lesson-pane"))
            await pilot.press("right_square_bracket")
        assert len(seen) > 8
        back = {}
        for _ in range(300):
            if screen.walk.at == 0:
                break
            await pilot.press("left_square_bracket")
            if screen.walk.frames() is None and screen.walk.stop.kind != "ask":
                back[screen.walk.at] = joined(await settled_text(app, pilot, "#lesson-pane"))
        assert back and all(back[at] == seen[at] for at in back), "going back shows another text"


async def test_a_finished_lesson_has_a_tick_at_home_and_a_left_one_resumes():
    first, second = LESSONS[0], LESSONS[1]
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        home = app.screen
        await open_lesson(app, pilot, first)
        await walk_to_the_end(app, pilot)
        await pilot.press("h")
        assert app.screen is home
        rows = screen_rows(app)
        assert any(f"Lesson 1: {first.title[:30]}" in row and "✓" in row for row in rows)
        assert not any("Lesson 2:" in row and "✓" in row for row in rows)

        await open_lesson(app, pilot, second)   # play part of lesson 2, then leave
        lesson_screen = app.screen
        await walk_until(app, pilot, lambda: lesson_screen.walk.reached >= 6, key="right_square_bracket")
        left_at, ran = lesson_screen.walk.resume_block, len(lesson_screen.model.session.records)
        await pilot.press("h")
        assert Progress.load().positions[second.id]["block"] == left_at

        await open_lesson(app, pilot, second)   # opening it again offers to resume
        assert isinstance(app.screen, ResumeScreen)
        dialog = app.screen.query_one("#resume-box").region
        assert abs(dialog.x - (app.size.width - dialog.right)) <= 1, "the dialog is centred"
        assert "esc keeps your place" in joined(screen_rows(app))
        # the place in the learner's words: the page the lesson's status line counts
        place = second.place_of(left_at)
        assert f"You left lesson 2 at {place}." in joined(screen_rows(app)) and "block" not in place
        await pilot.press("escape")          # the safe choice: keep the place
        await wait_until(pilot, lambda: getattr(app.screen, "walk", None) is not None)
        resumed = app.screen
        assert resumed.walk.stop.block == left_at
        # the blocks before the place ran again, and the one there (the walk plays it)
        ops = [b for b in second.blocks[:left_at + 1] if type(b).__name__ == "Operations"]
        assert len(resumed.model.session.records) == sum(len(b.ops) for b in ops) <= ran
        assert f"page {resumed.walk.stop.page + 1}" in joined(screen_rows(app))
        assert place.startswith(f"page {resumed.walk.stop.page + 1} of ")


def test_a_place_left_reads_as_the_apps_page_in_lessons_and_progress(cli):
    from radixviz.lessons.progress import save_lesson_position
    lesson = LESSONS[1]
    block = next(i for i, b in enumerate(lesson.blocks) if lesson.pages[i] == 2)
    assert save_lesson_position(lesson, block) is None
    pages = lesson.pages[-1] + 1
    _, listed, _ = cli("lessons")
    assert f"{lesson.title}  ({lesson.id}, {len(lesson.operations)} operations) · left at page 3 of {pages}" in listed
    _, shown, _ = cli("progress")
    assert f"(in progress: left at page 3 of {pages})" in shown and "block" not in shown


async def test_the_place_is_on_disk_while_the_lesson_is_open():
    """A terminal or a browser tab closed mid-lesson gives no key a chance to save the
    place: the progress file on disk already holds it, block by block."""
    lesson = LESSONS[1]
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        assert lesson.id not in Progress.load().positions
        await walk_until(app, pilot, lambda: screen.walk.reached >= 6, key="right_square_bracket")
        assert Progress.load().positions[lesson.id]["block"] == screen.walk.resume_block > 0
