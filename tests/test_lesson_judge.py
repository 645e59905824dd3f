"""One judge for every prediction: the app's lesson walk, ``lessons --check`` and ``lessons
--read`` all ask ``checker.hold_to_engine``, so a lesson that passes ``--check`` never tells
a learner in the app that it is wrong (issue 51: the app asked before the counts of today's
engine and the host tier were known, and read zeros)."""
import subprocess
import sys
import textwrap

import pytest

from radixviz.lessons import Predict, load_lessons

# a fresh Python, as a learner's app starts: nothing has checked a lesson before the walk
WALK = textwrap.dedent('''
    from radixviz.lessons import load_lessons
    from radixviz.script.session import Session
    from radixviz.tui.lesson_player import LessonWalk
    from radixviz.tui.stepper_model import StepperModel

    for lesson in load_lessons():
        if lesson.number not in NUMBERS:
            continue
        model, walk = StepperModel(Session(device="cpu")), LessonWalk(lesson)
        shown = set()
        while True:
            if walk.waiting is not None:
                walk.answer(walk.waiting.answer, walk.waiting.answer)
            stop, _ = walk.forward(model)
            if stop is None:
                break
            # what the lesson pane shows at this stop
            shown |= {line for part in walk.page()[0] for line in part.text.splitlines()}
        for line in sorted(shown):
            if "the lesson file is wrong" in line:
                print(lesson.number, line)
        print(lesson.number, "right", walk.right, "of", walk.asked)
''')


@pytest.mark.slow   # four lessons played in a fresh Python: seconds
def test_the_apps_walk_finds_no_wrong_lesson_where_check_finds_none():
    numbers = (13, 15, 16, 17)   # the lessons whose counts the app read as zeros
    done = subprocess.run([sys.executable, "-c", f"NUMBERS = {numbers}\n" + WALK],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lessons = {l.number: l for l in load_lessons()}
    expected = [f"{n} right {k} of {k}" for n in numbers
                for k in [sum(isinstance(b, Predict) for b in lessons[n].blocks)]]
    assert done.stdout.splitlines() == expected


def test_every_shipped_prediction_is_held_to_the_engine():
    missing = [(l.number, b.line) for l in load_lessons() for b in l.blocks
               if isinstance(b, Predict) and not b.check]
    assert missing == []
