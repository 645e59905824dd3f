"""Every shipped lesson played to its end as a learner plays it: in the app (Pilot) and
through ``lessons --read`` on standard input, once answering every prediction right and
once answering every prediction wrong."""
import io
import subprocess
import sys

import pytest

from radixviz.lessons import Predict, load_lessons
from radixviz.lessons.grading import read_number
from radixviz.lessons.progress import Progress
from radixviz.lessons.reader import read_plain
from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.predict import PredictScreen
from tui_helpers import notifications, wait_ready, watch_notifications

LESSONS = load_lessons()


def predictions(lesson) -> list:
    return [b for b in lesson.blocks if isinstance(b, Predict)]


def typed_right(p: Predict) -> str:
    """What a learner who knows the answer types (for a choice: the option itself)."""
    return p.answer


def typed_wrong(p: Predict) -> str:
    if p.choices:
        return next(c for c in p.choices if c != p.answer)
    number = read_number(p.answer)
    if number is not None:
        return str(int(float(number)) + 1)
    return "zz" if p.answer != "zz" else "yy"


def keys_for(text: str) -> list:
    names = {" ": "space", "-": "minus", '"': "quotation_mark", ",": "comma", "_": "underscore"}
    return [names.get(ch, ch) for ch in text]


async def play_in_app(lesson, right: bool, size=(100, 40)) -> list:
    """Play ``lesson`` to its end; return the notification each prediction got."""
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    watch_notifications(app)
    said = []
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        stepper = app.screen
        for _ in range(2000):
            if isinstance(app.screen, PredictScreen):
                dialog, p = app.screen, app.screen.ask.block
                if p.choices:      # pick the option from the list, as a person does
                    wanted = p.answer if right else typed_wrong(p)
                    await pilot.press(*["down"] * p.choices.index(wanted), "enter")
                else:              # type the answer
                    await pilot.press(*keys_for(typed_right(p) if right else typed_wrong(p)), "enter")
                await pilot.pause()
                # the dialog closes (the next one may open at once: predictions in a row)
                assert app.screen is not dialog, f"{p.question}: the reply was not read"
                # the verdict ("Lesson N completed" may follow it when the lesson ends there)
                said.append([n for n in notifications(app) if n.startswith(("Right!", "Not quite"))][-1])
                continue
            if stepper.player.done and stepper.model.at_end:
                break
            await pilot.press("right_square_bracket")
        else:
            pytest.fail("the lesson never reached its end")
        assert len(stepper.model.session.records) == len(lesson.operations)
    return said


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: l.id)
async def test_app_grades_every_right_answer_right_and_records_the_lesson(lesson):
    said = await play_in_app(lesson, right=True)
    assert len(said) == len(predictions(lesson))
    assert all(s.startswith("Right!") for s in said), said
    progress = Progress.load()
    assert lesson.id in progress.lessons, "a lesson played to its end is recorded completed"
    n = len(predictions(lesson))
    assert progress.prediction_score(lesson.id) == (n, n)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: l.id)
async def test_app_grades_every_wrong_answer_wrong(lesson):
    said = await play_in_app(lesson, right=False)
    assert said and all(s.startswith("Not quite") for s in said), said
    assert Progress.load().prediction_score(lesson.id) == (0, len(predictions(lesson)))


@pytest.mark.parametrize("right", [True, False], ids=["right", "wrong"])
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: l.id)
def test_read_grades_typed_answers(lesson, right):
    replies = [typed_right(p) if right else typed_wrong(p) for p in predictions(lesson)]
    out = io.StringIO()
    assert read_plain(lesson, io.StringIO("\n".join(replies) + "\n"), out) == 0
    text = out.getvalue()
    verdicts = [line.strip()[:1] for line in text.splitlines() if line.strip()[:1] in "✓✗" and line.strip()]
    assert verdicts == ["✓" if right else "✗"] * len(replies), text
    n = len(replies)
    assert f"You predicted {n if right else 0} of {n}" in text
    assert lesson.id in Progress.load().lessons


def test_read_on_the_command_line_takes_the_letter_of_an_option(tmp_path):
    lesson = LESSONS[0]
    replies = [("abcdef"[p.choices.index(p.answer)] if p.choices else p.answer + " tokens")
               for p in predictions(lesson)]
    done = subprocess.run([sys.executable, "-m", "radixviz", "lessons", "--read", "1"],
                          input="\n".join(replies) + "\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("✓ you predicted it") == len(replies)
    assert done.stdout.rstrip().endswith(f"You predicted {len(replies)} of {len(replies)}.")
