"""Every shipped lesson played to its end through ``lessons --read`` on standard input,
once answering every prediction right and once answering every prediction wrong. (In the
app, ``test_lesson_painted.py`` walks every lesson both ways and reads the screen.)"""
import io
import subprocess
import sys

import pytest

from radixviz.lessons import Predict, load_lessons
from radixviz.lessons.grading import read_number
from radixviz.lessons.progress import Progress
from radixviz.lessons.lesson.reader import read_plain

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
