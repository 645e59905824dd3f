"""A quiz question; replies are graded by the one grader, ``radixviz.lessons.grading``.

Kinds: ``choice`` (a letter, or the option itself), ``number``, ``node`` (a node id such as
``3`` or ``#3``, its whole key from the root, or its edge text when no other node has it),
``order`` (the items' letters in order, e.g. ``c a d b``), ``slots`` (a set of slot
numbers: ``4 5``, ``5 4``, ``3-5``) and ``text``. A question may accept more than one answer
(``accepted``); see the grading module for every form a reply may take.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..grading import LETTERS, Expected, grade, read_reply, read_slots, slots_key  # noqa: F401

KINDS = ("choice", "number", "node", "order", "slots", "text")
# how a node question asks to be answered, so that two nodes with the same edge text are
# never confused: the tree's numbers are unique, and so are whole keys
NAME_A_NODE = "\nAnswer with the node's number from the tree (after the #), or its whole key from the root."
FIXED_MATCHER = "\n(The matcher as fixed by PR #7, as in every question but the #7 ones.)"
NAME_BY_KEY = "\nAnswer with the leaf's whole key from the root (the tokens from the root down to it)."


@dataclass(frozen=True)
class Feedback:
    correct: bool
    answer: str          # the right answer as shown to the learner
    explanation: str
    understood: bool = True   # False when the reply could not be read (not counted as wrong)
    reason: str = ""          # why a readable reply is wrong
    skipped: bool = False     # the learner passed: counts as not right


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    prompt: str
    accepted: tuple              # canonical answers (see module doc)
    answer_text: str             # the answer as shown in feedback
    explanation: str = ""
    scenario: str = ""           # operations to replay in the stepper ("show me")
    choices: tuple = ()          # choice texts, or the items to order as shown
    nodes: tuple = ()            # for ``node``: (id, edge text, whole key) of each node shown
    tree_text: str = ""          # the tree before the asked operation, when the prompt shows it
    lesson: int | None = None
    difficulty: str = "medium"
    seed: int | None = None
    topic: str = ""

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind
        assert self.accepted, f"{self.id}: no accepted answer"

    @property
    def expected(self) -> Expected:
        nodes = self.nodes
        raw = Expected(self.kind, self.accepted, self.choices, nodes)
        canonical = tuple(read_reply(raw, a)[0] or a for a in self.accepted) \
            if self.kind in ("slots", "number") else self.accepted
        return Expected(self.kind, canonical, self.choices, nodes)

    def hint(self) -> str:
        """How to type a reply."""
        return self.expected.hint()

    def example_reply(self) -> str:
        """A reply that grades as right, typed the way the hint asks (for tests and "reveal")."""
        return self.expected.example_reply()

    def grade(self, reply: str) -> Feedback:
        """Grade typed text, or a ``grading.Chosen`` option."""
        verdict = grade(self.expected, reply)
        if not verdict.understood:
            return Feedback(False, self.answer_text, verdict.reason, False)
        return Feedback(verdict.correct, self.answer_text, self.explanation, reason=verdict.reason)

    def skip(self) -> Feedback:
        return Feedback(False, self.answer_text, self.explanation, skipped=True)


def parse_slots(reply: str) -> tuple | None:
    """``3 4 5``, ``3-5``, ``22–26``, ``[3, 4, 5]`` or ``none`` as a sorted tuple (None when unreadable)."""
    return read_slots(reply)
