"""Every generated question of every topic and level, over many seeds, plus every fixed one:
answered with its canonical answer, with every form a learner may type it in, and wrongly.
The grader must agree every time, and no question may hinge on something it does not say."""
import re

import pytest

from radixviz.lessons.quiz.fixed import fixed_questions
from radixviz.lessons.quiz.generate import DIFFICULTIES, GENERATORS, generate_question
from radixviz.lessons.grading import LETTERS

SEEDS = range(10)


def right_forms(q) -> set:
    forms = {q.example_reply(), q.answer_text}
    if q.kind != "choice":     # a choice's canonical form is its index, which nobody types
        forms |= {a for a in q.accepted if a}
    for a in q.accepted:
        if q.kind == "number":
            forms |= {f"{a} tokens", f" {a} "}
        elif q.kind == "slots":
            slots = [int(s) for s in a.split()]
            forms |= {f"[{', '.join(map(str, slots))}]"}
            if slots:
                forms |= {" ".join(map(str, reversed(slots))), ",".join(map(str, slots))}
            if slots and slots == list(range(slots[0], slots[-1] + 1)):
                forms |= {f"{slots[0]}–{slots[-1]}", f"{slots[0]}-{slots[-1]}"}
            if not slots:
                forms |= {"none", "[]"}
        elif q.kind == "text" and not a.isdigit():
            forms |= {f'"{a}"', f'"{a}" ({len(a)} tokens)'}
        elif q.kind == "text":
            forms |= {f"{a} tokens"}
        elif q.kind == "node":
            node = next(n for n in q.nodes if str(n[0]) == a)
            forms |= {f"#{a}", a, node[2]}
            if sum(1 for n in q.nodes if node[1] in (n[1], n[2])) == 1:
                forms.add(node[1])
        elif q.kind == "order":
            forms |= {",".join(a), " ".join(str(LETTERS.index(c) + 1) for c in a)}
        elif q.kind == "choice":
            index = int(a)
            forms |= {LETTERS[index], q.choices[index], f"{LETTERS[index]}) {q.choices[index]}"}
    return forms


def wrong_form(q) -> str:
    a = q.accepted[0]
    if q.kind == "number":
        return str(int(float(a)) + 1)
    if q.kind == "slots":
        return (a + " 999").strip()
    if q.kind == "text":
        return a + "q"
    if q.kind == "node":
        return "#" + str(next(n[0] for n in q.nodes if str(n[0]) != a))
    if q.kind == "order":
        return a[1] + a[0] + a[2:]
    return LETTERS[(int(a) + 1) % len(q.choices)]


def generated():
    for topic in sorted(GENERATORS):
        for difficulty in DIFFICULTIES:
            for seed in SEEDS:
                yield generate_question(seed, difficulty, topic)


QUESTIONS = list(generated()) + fixed_questions()


def test_the_sweep_covers_every_topic_level_and_kind():
    assert len(QUESTIONS) == len(GENERATORS) * len(DIFFICULTIES) * len(SEEDS) + len(fixed_questions())
    assert {q.kind for q in QUESTIONS} == {"choice", "number", "node", "order", "slots", "text"}


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_every_form_of_the_answer_is_right_and_a_wrong_one_is_wrong(q):
    for form in right_forms(q):
        feedback = q.grade(form)
        assert feedback.understood and feedback.correct, (form, feedback.explanation)
    wrong = q.grade(wrong_form(q))
    assert wrong.understood and not wrong.correct and wrong.reason, wrong_form(q)


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.kind == "node"], ids=lambda q: q.id)
def test_a_node_question_names_its_node_unambiguously(q):
    assert "whole key from the root" in q.prompt
    answer = next(n for n in q.nodes if str(n[0]) == q.accepted[0])
    if "#" in q.prompt:     # the tree with its node numbers is shown
        assert f"#{answer[0]} " in q.prompt
    # an edge text two nodes share is never graded as if it named one of them (unless it is
    # another node's whole key, which the prompt says is how a node is named)
    if not any(answer[1] == n[2] for n in q.nodes if n != answer):
        verdict = q.grade(answer[1])
        assert verdict.correct or not verdict.understood


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.topic == "policy"], ids=lambda q: q.id)
def test_an_order_question_states_its_tie_rule(q):
    assert "arrival order" in q.prompt


def test_ties_between_request_holding_siblings_are_never_asked():
    from radixviz.lessons.quiz.generate import _walk, _weight_tie
    from radixviz.lessons.scenario import run_scenario
    for q in (q for q in QUESTIONS if q.topic == "policy" and q.difficulty == "hard"):
        session = run_scenario(q.scenario)
        ended = [r.result["last_node"] for r in session.records if r.op.name == "match"]
        live = {n.id: n for n in _walk(session.cache.root_node)}
        assert not _weight_tie(session.cache.root_node, [live[i] for i in ended]), q.id


def test_generated_questions_say_which_matcher_they_use():
    for q in QUESTIONS:
        if q.topic in ("match", "split", "policy") and q.id.startswith("gen-"):
            assert re.search(r"fixed by PR #7", q.prompt), q.id
