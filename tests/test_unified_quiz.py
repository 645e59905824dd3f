"""Quiz questions on v0.5.23's unified tree (lessons 18-19): generated and answered by the
unified engine at three levels; "show me" replays each to the same answer."""
import pytest

from radixviz.lessons.quiz import make_quiz
from radixviz.lessons.quiz.generate import generate_question
from radixviz.lessons.scenario import run_scenario


def _protected(session, name):
    (held,) = [h for h in session.cache.snapshot().held if h.component.name == name]
    return held.protected


def _branch(session):
    branch = session.records[-1].result.get("mamba_branch")
    return "none" if branch is None else branch


# topic -> what the replayed session says the answer is (read apart from the generator)
ANSWER = {
    "swa-reuse": lambda s: s.records[-1].result["matched"],
    "swa-lock": lambda s: _protected(s, "swa"),
    "mamba-reuse": lambda s: s.records[-1].result["matched"],
    "mamba-branch": _branch,
}


@pytest.mark.parametrize("lesson, topics", [(18, {"swa-reuse", "swa-lock"}), (19, {"mamba-reuse", "mamba-branch"})])
@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_questions_replay_to_their_answer_on_the_engine(lesson, topics, difficulty):
    seen = set()
    for seed in range(8):
        question = generate_question(seed, difficulty, lesson=lesson)
        assert question.topic in topics and question.lesson == lesson
        assert question == generate_question(seed, difficulty, lesson=lesson)   # a pure function
        session = run_scenario(question.scenario)
        assert session.engine.name == "unified"
        assert question.accepted == (str(ANSWER[question.topic](session)),)
        assert question.grade(question.example_reply()).correct
        seen.add(question.topic)
    assert seen == topics


def test_the_questions_need_the_rules_not_the_full_kv_alone():
    """Some sliding-window and Mamba questions have an answer short of what the full KV
    reaches (a cut the learner must see), and the branching point is sometimes absent."""
    reuse = [generate_question(seed, "medium", topic=topic) for topic in ("swa-reuse", "mamba-reuse")
             for seed in range(12)]
    cut = [q for q in reuse if run_scenario(q.scenario).records[-1].result["full_hit"] > int(q.accepted[0])]
    assert cut
    branches = {generate_question(seed, "medium", topic="mamba-branch").accepted[0] for seed in range(12)}
    assert "none" in branches and branches - {"none"}


def test_a_quiz_on_lesson_18_mixes_its_two_topics():
    quiz = make_quiz(seed=1, difficulty="easy", lesson=18, count=6)
    assert {q.topic for q in quiz.questions} == {"swa-reuse", "swa-lock"}
