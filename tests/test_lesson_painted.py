"""Every shipped lesson, walked in the app as a learner walks it, shows all of itself.

At 120x40 and at 80x24, answering every prediction right and (in a second run) wrong, the
test presses → (end while operations step, as a learner in a hurry does), answers each
prediction docked on screen, and keeps what Textual painted in the lesson pane. Every
paragraph of the lesson file, every explanation (with the reason ``lessons --read`` gives,
right or wrong) and the closing words must have been painted, in the file's order.
Lessons are found in the lessons folder, so one added later is walked too.
"""
import io
import re

import pytest

from radixviz.lessons import Narrative, Predict, load_lessons
from radixviz.lessons.progress import Progress
from radixviz.lessons.lesson.reader import read_plain
from radixviz.tui.app import RadixvizApp
from tui_helpers import painted_text, screen_rows, wait_ready

pytestmark = pytest.mark.slow

LESSONS = load_lessons()
SIZES = [(120, 40), (80, 24)]
LETTERS = "abcdefgh"


def sig(text: str) -> str:
    """Letters and digits only: what survives Markdown's marks, wrapping and bullets."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def paragraphs(text: str) -> list[tuple[str, str]]:
    """A paragraph block's paragraphs, as ("paragraph", text); a table's cells one by one, as
    ("cell", text), each whole (the app never wraps a cell between its neighbours' rows)."""
    found = []
    for chunk in re.split(r"\n\s*\n", text.strip()):
        if chunk.lstrip().startswith("|"):
            found += [("cell", cell) for row in chunk.splitlines() for cell in row.split("|") if sig(cell)]
        elif sig(chunk):
            found.append(("paragraph", chunk))
    return found


def reply_for(predict: Predict, right: bool) -> str:
    if predict.choices:
        return predict.answer if right else next(c for c in predict.choices if c != predict.answer)
    if right:
        return predict.answer
    number = re.match(r"-?\d+", predict.answer)
    return str(int(number.group()) + 1) if number else "zz"


def read_explanations(lesson, right: bool) -> list[str]:
    """The ✓/✗ lines ``lessons --read`` prints for these replies, in order."""
    replies = [reply_for(b, right) for b in lesson.blocks if isinstance(b, Predict)]
    out = io.StringIO()
    read_plain(lesson, io.StringIO("\n".join(replies) + "\n"), out, save=False)
    return [line.strip() for line in out.getvalue().splitlines() if line.strip()[:1] in ("✓", "✗")]


def expected_texts(lesson, right: bool) -> list[tuple[str, str]]:
    """(what, text) in the order the lesson shows them: its paragraphs (the app's own
    passages too), each explanation after the operations that answer it, the end."""
    explanations = iter(read_explanations(lesson, right))
    texts, pending = [], 0
    for block in lesson.blocks:
        if isinstance(block, Narrative):
            texts += paragraphs(block.in_app)
        elif isinstance(block, Predict):
            pending += 1
        else:
            texts += [("explanation", next(explanations)) for _ in range(pending)]
            pending = 0
    return texts + [("closing", f"End of lesson {lesson.number}.")]


class Transcript:
    """The rows painted in the lesson pane, in order, overlapping screens merged once."""

    def __init__(self):
        self.rows: list[str] = []

    def add(self, rows: list[str]) -> None:
        for overlap in range(min(len(rows), len(self.rows)), 0, -1):
            if self.rows[-overlap:] == rows[:overlap]:
                self.rows += rows[overlap:]
                return
        self.rows += rows

    def missing(self, expected) -> list:
        """The expected texts not found in order (each after the one before it)."""
        text, at, lost = "".join(sig(row) for row in self.rows), 0, []
        for what, words in expected:
            found = text.find(sig(words), at)
            if found < 0:
                lost.append((what, words[:90]))
            else:
                at = found + len(sig(words))
        return lost


async def walk(lesson, size, right: bool) -> tuple[Transcript, list]:
    """Walk ``lesson`` to its end in one app; returns what the lesson pane painted and the
    questions the docked predictions painted."""
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    predicts = iter([b for b in lesson.blocks if isinstance(b, Predict)])
    transcript, asked = Transcript(), []
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        closing = sig(f"End of lesson {lesson.number}.")
        await pilot.pause()
        for _ in range(1500):
            page = painted_text(app, "#lesson-pane")
            transcript.add(page)
            dock = painted_text(app, "#predict-dock")
            if dock:
                predict = next(predicts)
                asked.append(sig(" ".join(dock)).startswith(sig(predict.question)))
                reply = reply_for(predict, right)
                if predict.choices:    # by its letter, or (wrong run) with the arrows
                    index = predict.choices.index(reply)
                    keys = [LETTERS[index]] if right else ["down"] * index + ["enter"]
                else:
                    keys = [{" ": "space", "-": "minus"}.get(ch, ch) for ch in reply] + ["enter"]
                await pilot.press(*keys)
                continue
            rows = screen_rows(app)
            if closing in sig(" ".join(page)) and not any("▼ more" in row for row in rows):
                break
            # a block's operations: to their last step at once (the text does not change
            # while they step), then on
            at_last_step = "step" in rows[-2] and re.search(r"step (\d+)/\1\b", rows[-2])
            stepping = bool(painted_text(app, "#step-pane")) and not at_last_step
            await pilot.press("end" if stepping else "right")
        else:
            pytest.fail(f"lesson {lesson.number} never reached its end at {size}")
    return transcript, asked


@pytest.mark.parametrize("right", [True, False], ids=["right", "wrong"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: f"{l.number:02d}")
async def test_every_paragraph_and_explanation_is_painted_in_order(lesson, size, right):
    transcript, asked = await walk(lesson, size, right)
    expected = expected_texts(lesson, right)
    assert transcript.missing(expected) == [], f"never painted in order at {size}"
    assert all(asked) and len(asked) == sum(isinstance(b, Predict) for b in lesson.blocks)
    n = len(asked)
    progress = Progress.load()
    assert lesson.id in progress.lessons, "a lesson walked to its end is recorded completed"
    assert progress.prediction_score(lesson.id) == ((n if right else 0), n)
