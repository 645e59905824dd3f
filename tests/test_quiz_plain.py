"""``radixviz quiz --plain`` driven end to end through a pipe, as a learner without a full screen."""
import json
import subprocess
import sys

from radixviz.lessons import load_lessons
from radixviz.lessons.quiz import make_quiz


def quiz(args, replies, data_dir):
    env = {"RADIXVIZ_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "radixviz", "quiz", "--plain", *args],
                          input="".join(r + "\n" for r in replies), capture_output=True, text=True,
                          timeout=120, env=env)


def test_right_answers_score_full_marks_and_are_saved(tmp_path):
    expected = make_quiz(7, "easy", count=3)
    done = quiz(["--seed", "7", "--difficulty", "easy", "--count", "3"],
                [q.example_reply() for q in expected.questions], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("✓ right") == 3 and "Score: 3/3" in done.stdout
    assert expected.questions[0].prompt.splitlines()[0] in done.stdout
    saved = json.loads((tmp_path / "progress.json").read_text())
    assert saved["scores"][0] | {"when": None} == {"when": None, "score": 3, "total": 3, "difficulty": "easy",
                                                   "lesson": None, "seed": 7}


def test_wrong_and_unreadable_replies_get_feedback(tmp_path):
    expected = make_quiz(2, "medium", lesson=3, count=2)
    first = expected.questions[0]
    done = quiz(["--seed", "2", "--lesson", "3", "--count", "2"], ["banana", "999", "show", "?"], tmp_path)
    assert done.returncode == 0
    assert "could not read 'banana'" in done.stdout
    assert f"✗ not quite (999 is too many): the answer is {first.answer_text}" in done.stdout
    assert "replaying the scenario on a fresh cache:" in done.stdout   # "show" on question 2
    assert "(end of input)" in done.stdout and "Score: 0/2 (1 not answered)" in done.stdout


def test_end_of_input_before_any_answer(tmp_path):
    done = quiz(["--selftest"], [], tmp_path)
    assert done.returncode == 0 and "Score: 0/17 (17 not answered)" in done.stdout and "Traceback" not in done.stderr
    assert not (tmp_path / "progress.json").exists()


def test_bad_lesson_is_bad_input(tmp_path):
    done = quiz(["--lesson", "99"], [], tmp_path)
    numbers = ", ".join(str(l.number) for l in load_lessons())
    assert done.returncode == 2 and done.stderr.strip() == f"radixviz: no lesson '99' (lessons: {numbers})"


def test_selftest_says_what_it_asks_and_show_on_an_empty_setup_says_so(tmp_path):
    done = quiz(["--selftest", "--no-save"], ["b", "show", "quit"], tmp_path)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    count = len(make_quiz(0, selftest=True).questions)
    assert first == f"radixviz self-test: the chapter's {count} self-test questions and exercises"
    assert "(no operations: the question starts from an empty cache)" in done.stdout
