"""Every lesson, walked in the app as a learner walks it, shows all of itself and only what
is true, at 120x40 and at 80x24, in one app per lesson.

The walk answers every prediction right (its letter, or typed) and presses → (end while
operations step, as a learner in a hurry does), at 120x40 to the lesson's end, then at
80x24 from its start again in the same app. It keeps what Textual painted in the lesson
pane after each key, and fails when:

- a paragraph of the lesson file, an explanation (with the words ``lessons --read`` gives),
  or the closing words were never painted, in the file's order, at either size;
- a "the lesson file is wrong" line is painted: ``lessons --check`` passes every shipped
  lesson, so the engine agrees with every answer (issue 51);
- a ``<!-- show: ... -->`` pointer's sentence is painted while what it names (a node's
  line, a pool's rows, a line of text) is not painted whole in its pane, at either size.

Lessons are found in the lessons folder, so one added later is walked too.
"""
import io
import re

import pytest

from radixviz.lessons import Narrative, Predict, load_lessons
from radixviz.lessons.progress import Progress
from radixviz.lessons.lesson.reader import read_plain
from radixviz.tui.app import RadixvizApp
from tui_helpers import painted_text, screen_rows, wait_ready, wait_until

pytestmark = pytest.mark.slow

LESSONS = load_lessons()
BIG, SMALL = (120, 40), (80, 24)
LETTERS = "abcdefgh"
WRONG_LESSON = "thelessonfileiswrong"
PANES = {"tree": "#tree-pane", "pool": "#pool-pane"}


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


def read_explanations(lesson) -> list[str]:
    """The ✓ lines ``lessons --read`` prints for right replies, in order."""
    replies = [b.answer for b in lesson.blocks if isinstance(b, Predict)]
    out = io.StringIO()
    read_plain(lesson, io.StringIO("\n".join(replies) + "\n"), out, save=False)
    return [line.strip() for line in out.getvalue().splitlines() if line.strip()[:1] in ("✓", "✗")]


def expected_texts(lesson) -> list[tuple[str, str]]:
    """(what, text) in the order the lesson shows them: its paragraphs (the app's own
    passages too), each explanation after the operations that answer it, the end."""
    explanations = iter(read_explanations(lesson))
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


class Walk:
    """What one walk through a lesson saw: the lesson pane's rows at each size, the
    pointers found painted beside their sentence (by size), what was wrong."""

    def __init__(self):
        self.transcripts = {BIG: Transcript(), SMALL: Transcript()}
        self.pointed: set = set()        # (size, pointer) painted beside its sentence
        self.problems: list[str] = []

    def read(self, app, size) -> list[str]:
        """Keep what the lesson pane paints now; check the stop's pointers against it."""
        page = painted_text(app, "#lesson-pane")
        self.transcripts[size].add(page)
        if WRONG_LESSON in sig(" ".join(page)):
            self.problems.append(f"at {size}: " + " ".join(page))
        shown = sig(" ".join(page))
        for pointer in app.screen.walk.pointers():
            if sig(pointer.sentence) not in shown:
                continue
            pane = app.screen.query_one(PANES[pointer.pane])
            painted = painted_text(app, PANES[pointer.pane])
            wanted = [pane.lines[i].plain.rstrip() for i in pane.pointed]
            if pane.pointed and all(line in painted for line in wanted):
                self.pointed.add((size, pointer))
            else:
                self.problems.append(f"at {size}, line {pointer.line}: {pointer.kind} {pointer.target!r} "
                                     f"not painted beside {pointer.sentence!r}: wanted {wanted}, "
                                     f"painted {painted}")
        return page


async def walk_at(app, pilot, lesson, size, seen: Walk) -> None:
    """Walk ``lesson`` to its end at ``size``, reading the lesson pane after each key."""
    await wait_until(pilot, lambda: getattr(app.screen, "walk", None) is not None and app.screen.walk.at >= 0)
    await pilot.pause()
    closing = sig(f"End of lesson {lesson.number}.")
    for _ in range(1500):
        page = seen.read(app, size)
        predict = app.screen.walk.waiting
        if predict is not None and painted_text(app, "#predict-dock"):
            if predict.choices:
                keys = [LETTERS[predict.choices.index(predict.answer)]]
            else:
                keys = [{" ": "space", "-": "minus"}.get(ch, ch) for ch in predict.answer] + ["enter"]
            await pilot.press(*keys)
            continue
        rows = screen_rows(app)
        if closing in sig(" ".join(page)) and not any("▼ more" in row for row in rows):
            return
        # a block's operations: to their last step at once (the text does not change
        # while they step), then on
        at_last_step = "step" in rows[-2] and re.search(r"step (\d+)/\1\b", rows[-2])
        stepping = bool(painted_text(app, "#step-pane")) and not at_last_step
        await pilot.press("end" if stepping else "right")
        await pilot.wait_for_scheduled_animations()
    pytest.fail(f"lesson {lesson.number} never reached its end at {size}")


async def walk(lesson) -> Walk:
    """Walk ``lesson`` to its end in one app at 120x40, then again from its start at 80x24."""
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    seen = Walk()
    async with app.run_test(size=BIG) as pilot:
        await wait_ready(app, pilot)
        await walk_at(app, pilot, lesson, BIG, seen)
        await pilot.resize_terminal(*SMALL)
        app.open_lesson(lesson)   # a lesson walked to its end opens at its start again
        await walk_at(app, pilot, lesson, SMALL, seen)
    return seen


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: f"{l.number:02d}")
async def test_every_paragraph_answer_and_pointer_is_painted_and_true(lesson):
    seen = await walk(lesson)
    assert seen.problems == []
    expected = expected_texts(lesson)
    for size, transcript in seen.transcripts.items():
        assert transcript.missing(expected) == [], f"never painted in order at {size}"
    pointers = [p for b in lesson.blocks if isinstance(b, Narrative) for p in b.pointers]
    assert {(size, p) for size in (BIG, SMALL) for p in pointers} <= seen.pointed
    n = sum(isinstance(b, Predict) for b in lesson.blocks)
    progress = Progress.load()
    assert lesson.id in progress.lessons, "a lesson walked to its end is recorded completed"
    assert progress.prediction_score(lesson.id) == (n, n)
