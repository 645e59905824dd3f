"""Quiz questions on today's cache (lessons 10-12): generated and answered by the 2026 engine,
at three levels, and graded as a learner types the answers."""
import io

import pytest

from radixviz.commands.quiz import ask_plain
from radixviz.lessons.quiz.generate import generate_question
from radixviz.lessons.quiz import make_quiz
from radixviz.lessons.scenario import run_scenario


@pytest.mark.parametrize("lesson, topic", [(10, "pages"), (11, "eviction-policy"), (12, "protected")])
@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_questions_replay_to_their_answer_on_the_engine(lesson, topic, difficulty):
    for seed in range(6):
        question = generate_question(seed, difficulty, lesson=lesson)
        assert question.topic == topic and question.lesson == lesson
        assert question == generate_question(seed, difficulty, lesson=lesson)   # a pure function
        session = run_scenario(question.scenario)      # "show me" replays setup + question
        assert session.engine.name == "2026"
        last = session.records[-1]
        if topic == "pages":
            assert question.accepted == (str(last.result["prefix_len"]),)
        elif topic == "protected":
            assert question.accepted == (str(session.cache.protected_size()),)
        else:
            deleted = [f.data["leaf"] for f in session.frames[last.first_frame:] if f.kind == "delete"]
            assert question.accepted == (str(deleted[0]),)


def test_a_learner_answers_lesson_11_in_plain_text():
    quiz = make_quiz(seed=4, difficulty="hard", lesson=11, count=3)
    replies = "".join(f"{q.accepted[0]}\n" for q in quiz.questions)
    out = io.StringIO()
    ask_plain(quiz, io.StringIO(replies), out, save=False)
    assert quiz.score == 3 and "3/3" in out.getvalue().replace(" ", "")
