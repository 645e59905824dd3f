"""Quiz questions: stored answers agree with the engine, generated ones replay from their seed."""
import pytest

from radixviz.lessons.quiz.fixed import FIXED, computed_answer, fixed_questions
from radixviz.lessons.quiz.generate import DIFFICULTIES, GENERATORS, generate_question
from radixviz.lessons.quiz.questions import Question, parse_slots
from radixviz.lessons.quiz import make_quiz
from radixviz.lessons.scenario import run_scenario


def right_reply(q) -> str:
    """What a learner who knows the answer would type."""
    return q.example_reply()


class TestFixed:
    @pytest.mark.parametrize("spec", FIXED, ids=lambda f: f.id)
    def test_stored_answer_is_what_the_engine_computes(self, spec):
        assert computed_answer(spec) in spec.accepted

    def test_covers_self_test_and_exercises_with_every_kind(self):
        sources = {f.source for f in FIXED}
        assert {"self-test 1", "self-test 2", "self-test 3", "self-test 4",
                "exercise 1", "exercise 2", "exercise 3"} <= sources
        assert {"choice", "number", "node", "order"} <= {f.kind for f in FIXED}

    def test_scenario_replays_to_the_asked_operation(self):
        for q in fixed_questions():
            run_scenario(q.scenario)      # every scenario is valid operation text


class TestGrading:
    def test_each_kind_accepts_right_and_refuses_wrong(self):
        for q in fixed_questions():
            assert q.grade(right_reply(q)).correct, q.id
        choice = next(q for q in fixed_questions() if q.kind == "choice")
        assert choice.grade("2").correct and choice.grade(choice.choices[1].upper()).correct
        assert not choice.grade("a").correct

    def test_a_reply_that_is_a_choice_means_that_choice_not_its_number(self):
        q = Question("numbers", "choice", "How many?", ("1",), "b: 3", "", choices=("2", "3", "4"))
        assert q.grade("3").correct and q.grade("b").correct
        assert not q.grade("2").correct      # the choice "2", not the second choice

    def test_node_by_id_or_edge_text(self):
        q = next(q for q in fixed_questions() if q.kind == "node")
        assert q.grade("2").correct and q.grade("qrs").correct and not q.grade("#1").correct

    def test_split_accepts_tokens_or_count(self):
        q = next(q for q in fixed_questions() if q.id == "selftest-2-split")
        assert q.grade("Hello_").correct and q.grade("6").correct and not q.grade("Hello").correct

    def test_unreadable_reply_is_not_counted(self):
        q = next(q for q in fixed_questions() if q.kind == "order")
        feedback = q.grade("a b")
        assert not feedback.understood and "letters in order" in feedback.explanation
        assert q.grade("c a e d b").correct and q.grade("3 1 5 4 2").correct and q.grade("caedb").correct

    def test_slot_syntax(self):
        assert parse_slots("22-26") == parse_slots("[22, 23, 24, 25, 26]") == (22, 23, 24, 25, 26)
        assert parse_slots("none") == () and parse_slots("x") is None


class TestGenerated:
    @pytest.mark.parametrize("difficulty", DIFFICULTIES)
    @pytest.mark.parametrize("topic", sorted(GENERATORS))
    def test_same_seed_same_question(self, topic, difficulty):
        a, b = (generate_question(1234, difficulty, topic) for _ in range(2))
        assert (a.prompt, a.scenario, a.accepted) == (b.prompt, b.scenario, b.accepted)
        others = {generate_question(s, difficulty, topic).scenario for s in range(8)}
        assert len(others) > 3, "seeds give different scenarios"

    @pytest.mark.parametrize("seed", range(12))
    def test_answer_matches_a_fresh_replay_of_the_scenario(self, seed):
        """Replaying ``scenario`` from scratch reproduces the answer independently."""
        for difficulty in DIFFICULTIES:
            for topic in ("match", "insert", "lock", "buggy", "evict"):
                q = generate_question(seed, difficulty, topic)
                session = run_scenario(q.scenario)
                last = session.records[-1].result
                if topic == "evict":
                    deleted = [f.data["leaf"] for f in session.frames if f.kind == "delete"]
                    assert deleted[0] == int(q.accepted[0])
                else:
                    field = {"match": "slots" if q.kind == "slots" else "matched", "buggy": "matched",
                             "insert": "prefix_len"}
                    value = last[field[topic]] if topic in field else session.cache.evictable_size()   # lock
                    shown = " ".join(map(str, value)) if isinstance(value, list) else str(value)
                    assert shown in q.accepted, (q.id, shown, q.accepted)

    def test_buggy_questions_show_a_disagreement_from_medium_up(self):
        for seed in range(10):
            for difficulty in ("medium", "hard"):
                q = generate_question(seed, difficulty, "buggy")
                result = run_scenario(q.scenario).records[-1].result
                assert result["disagreement"] is not None and result["disagreement"]["wrong_slots"]

    def test_hard_questions_hide_the_tree_for_match(self):
        q = generate_question(5, "hard", "match")
        assert "The tree now" not in q.prompt and "Scenario:" in q.prompt
        assert "The tree now" in generate_question(5, "easy", "match").prompt


class TestQuiz:
    def test_lesson_quiz_starts_with_its_fixed_questions(self):
        quiz = make_quiz(3, "easy", lesson=8, count=4)
        assert [q.id for q in quiz.questions[:2]] == ["bug-7-count", "bug-7-slots"]
        assert all(q.lesson == 8 for q in quiz.questions)

    def test_same_seed_same_quiz_and_scoring(self):
        a, b = make_quiz(9, "hard", count=5), make_quiz(9, "hard", count=5)
        assert [q.prompt for q in a.questions] == [q.prompt for q in b.questions]
        for i, q in enumerate(a.questions):
            a.answer(i, right_reply(q))
        assert a.score == 5

    def test_bad_arguments(self):
        with pytest.raises(ValueError, match="difficulty"):
            make_quiz(1, "extreme")
        with pytest.raises(ValueError, match="no quiz for lesson 99"):
            make_quiz(1, lesson=99)
