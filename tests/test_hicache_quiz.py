"""Quiz questions on the host tier (lessons 15-16): generated and answered by the hicache
engine at three levels; "show me" replays each to the same answer."""
import io

import pytest

from radixviz.commands.quiz import ask_plain
from radixviz.lessons.quiz.generate import generate_question
from radixviz.lessons.quiz import make_quiz
from radixviz.lessons.scenario import run_scenario

# topic -> what the replayed session says the answer is
ANSWER = {
    "host-hit": lambda s: s.records[-1].result["host_hit_length"],
    "load-back": lambda s: s.records[-1].result["loaded"],
    "write-policy": lambda s: s.engine.host_pool.used_size(),
    "in-flight": lambda s: s.records[-1].result["evicted"],
}


@pytest.mark.parametrize("lesson, topics", [(15, {"host-hit", "load-back"}), (16, {"write-policy", "in-flight"})])
@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_questions_replay_to_their_answer_on_the_engine(lesson, topics, difficulty):
    seen = set()
    for seed in range(8):
        question = generate_question(seed, difficulty, lesson=lesson)
        assert question.topic in topics and question.lesson == lesson
        assert question == generate_question(seed, difficulty, lesson=lesson)   # a pure function
        session = run_scenario(question.scenario)
        assert session.engine.name == "hicache"
        assert question.accepted == (str(ANSWER[question.topic](session)),)
        seen.add(question.topic)
    assert seen == topics


def test_the_load_back_threshold_decides_both_ways():
    answers = {generate_question(seed, "medium", topic="load-back").accepted[0] for seed in range(20)}
    assert "0" in answers and answers - {"0"}


def test_a_learner_answers_lesson_16_in_plain_text():
    quiz = make_quiz(seed=2, difficulty="medium", lesson=16, count=3)
    replies = "".join(f"{q.accepted[0]}\n" for q in quiz.questions)
    out = io.StringIO()
    ask_plain(quiz, io.StringIO(replies), out, save=False)
    assert quiz.score == 3
