"""The one grader: a picked option by identity, typed answers in the forms the app prints."""
import pytest

from radixviz.lessons import Predict, load_lessons
from radixviz.lessons.quiz.fixed import fixed_questions
from radixviz.lessons.grading import Chosen, Expected, grade

LESSONS = {l.number: l for l in load_lessons()}


def predict_of(number: int, question_start: str) -> Predict:
    return next(b for b in LESSONS[number].blocks
                if isinstance(b, Predict) and b.question.startswith(question_start))


class TestPickedOptionByIdentity:
    """Each reproduces a reported bug: the app re-read the option's index as its text."""

    def test_lesson_1_numeric_choices(self):
        p = predict_of(1, "After also inserting")
        assert p.choices == ("2", "3", "4") and p.answer == "3"
        assert p.accepts(Chosen(1)), "picking the option 3 is right"
        assert not p.accepts(Chosen(2)), "picking the option 4 is wrong"
        assert not p.accepts(Chosen(0))

    def test_lesson_8_node_count(self):
        p = predict_of(8, "How many nodes")
        right = p.choices.index(p.answer)
        assert p.accepts(Chosen(right))
        assert not any(p.accepts(Chosen(i)) for i in range(len(p.choices)) if i != right)

    def test_lesson_5_fourth_prediction(self):
        p = [b for b in LESSONS[5].blocks if isinstance(b, Predict)][3]
        assert p.choices == ("0", "3", "6")
        right = p.choices.index(p.answer)
        assert p.accepts(Chosen(right))
        assert sum(p.accepts(Chosen(i)) for i in range(3)) == 1

    def test_every_option_of_every_shipped_prediction(self):
        """Exactly one option of every multiple-choice prediction is right: the answer."""
        for lesson in LESSONS.values():
            for p in (b for b in lesson.blocks if isinstance(b, Predict) and b.choices):
                graded = [p.accepts(Chosen(i)) for i in range(len(p.choices))]
                assert graded == [c == p.answer for c in p.choices], (lesson.id, p.question)

    def test_typed_option_text_letter_and_form(self):
        p = predict_of(1, "After also inserting")
        assert p.accepts("3") and p.accepts("b") and p.accepts("3 nodes") and p.accepts("b) 3")
        assert not p.accepts("2") and not p.accepts("c")
        verdict = p.grade("b) 4")
        assert not verdict.understood and "letter b" in verdict.reason


class TestTypedAnswers:
    def test_number_with_unit(self):
        e = Expected("number", ("16",))
        assert grade(e, "16").correct and grade(e, "16 tokens").correct and grade(e, " 16. ").correct
        assert not grade(e, "15 tokens").correct
        assert grade(Expected("number", ("-3",)), "−3").correct     # a typographic minus

    def test_slots_as_a_set_in_any_form(self):
        e = Expected("slots", ("22 23 24 25 26",))
        for reply in ("22–26", "22-26", "26 25 24 23 22", "[22, 23, 24, 25, 26]", "22,23,24,25,26",
                      "22..26", "slots 22-26"):
            assert grade(e, reply).correct, reply
        assert grade(Expected("slots", ("4 5",)), "5 4").correct
        assert grade(Expected("slots", ("4 5",)), "4,5").correct
        assert grade(Expected("slots", ("",)), "none").correct

    def test_list_order_counts(self):
        e = Expected("list", ("cd ab",))
        assert grade(e, "cd, ab").correct and grade(e, '"cd" → "ab"').correct and grade(e, "cd ab").correct
        wrong = grade(e, "ab cd")
        assert not wrong.correct and "order" in wrong.reason

    def test_the_apps_own_text_format(self):
        q = next(q for q in fixed_questions() if q.id == "selftest-2-split")
        for reply in ('"Hello_" (6 tokens)', "Hello_", '"Hello_"', "6", "6 tokens", q.answer_text):
            assert q.grade(reply).correct, reply
        assert not q.grade("Hello").correct

    def test_slot_choice_typed_as_a_range(self):
        p = predict_of(8, "Which of the slots")
        assert p.accepts("22–26") and p.accepts("22-26") and p.accepts("26 25 24 23 22")
        assert not p.accepts("0-5")

    def test_wrong_replies_say_why(self):
        assert grade(Expected("number", ("3",)), "4").reason == "4 is too many"
        assert "missing" in grade(Expected("slots", ("4 5",)), "4").reason
        assert "not part" in grade(Expected("slots", ("4 5",)), "4 5 6").reason
        unreadable = grade(Expected("number", ("3",)), "three")
        assert not unreadable.understood and "whole number" in unreadable.reason

    def test_an_option_is_named_by_the_text_it_quotes(self):
        e = Expected("choice", ("0",), choices=('A, "greetings!"', "C, the cat sentence", "none"))
        assert grade(e, "greetings!").correct and grade(e, '"greetings!"').correct
        assert not grade(e, "none").correct and grade(e, "none").understood
        # two options quoting the same text: the text names neither
        twice = Expected("choice", ("0",), choices=('"ab" first', '"ab" last'))
        assert not grade(twice, "ab").understood

    def test_a_node_named_by_an_edge_text_two_nodes_share(self):
        nodes = ((1, "x", "x"), (2, "a", "xa"), (3, "b", "b"), (4, "a", "ba"))
        e = Expected("node", ("4",), nodes=nodes)
        assert grade(e, "#4").correct and grade(e, "4").correct and grade(e, "ba").correct
        assert grade(e, '#4 "a" (whole key "ba")').correct      # the answer as the app prints it
        ambiguous = grade(e, "a")
        assert not ambiguous.understood and "2 nodes" in ambiguous.reason
        assert not grade(e, "#1").correct and not grade(e, "b").correct and grade(e, "b").understood
        # a whole key wins over another node's edge: the question asks for whole keys
        assert grade(Expected("node", ("1",), nodes=((1, "b", "b"), (2, "b", "ab"))), "b").correct


@pytest.mark.parametrize("reply", ["", "   "])
def test_nothing_typed_is_not_graded(reply):
    verdict = grade(Expected("number", ("1",)), reply)
    assert not verdict.understood and not verdict.correct


def test_an_option_out_of_range_is_refused():
    with pytest.raises(ValueError):
        grade(Expected("choice", ("0",), choices=("x", "y")), Chosen(2))


BROKEN = """---
id: broken
number: 50
title: Two mistakes
---
Text.

```predict
question: How many?
choices: 1 | 2
answer: 3
```

```radixviz
insert "abc"
frob 2
```

```predict
question: Tokens?
answer: 4
check: total_size
explain: x
```

```radixviz
insert "abcd"
```
"""


def test_check_reports_every_problem_of_a_file(tmp_path, capsys):
    """An answer that is not among its choices, and a bad operation: both, with their lines."""
    from radixviz.cli import main
    (tmp_path / "50-broken.md").write_text(BROKEN)
    with pytest.raises(SystemExit) as done:
        main(["lessons", "--check", str(tmp_path)])
    out = capsys.readouterr().out.splitlines()
    assert done.value.code == 1
    assert [line.split(":")[1] for line in out] == ["8", "16"], out
    assert "answer '3' is not one of the choices 1 | 2" in out[0] and "frob" in out[1]


def test_a_typed_number_names_the_option_that_carries_it_not_its_place():
    # the routing quiz: options "worker 0", "worker 1"; typing 1 means worker 1
    from radixviz.lessons.quiz.generate import generate_question
    workers = Expected("choice", ("1",), ("worker 0", "worker 1"))
    assert grade(workers, "1").correct and not grade(workers, "0").correct
    for seed in range(40):
        q = generate_question(seed, "medium", topic="routing")
        worker = q.answer_text.split()[-1]
        assert q.grade(worker).correct, (seed, q.answer_text)
        wrong = next(c for c in q.choices if c != q.answer_text).split()[-1]
        assert not q.grade(wrong).correct
    # options that are lists of numbers: a bare number is none of them, not the first
    lists = Expected("choice", ("1",), ("0 0 1 0", "0 1 0 1"))
    assert not grade(lists, "1").understood
    # no digit anywhere: the 1-based place still works
    words = Expected("choice", ("1",), ("yes", "no"))
    assert grade(words, "2").correct
