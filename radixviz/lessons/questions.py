"""A quiz question and how a reply is graded.

Kinds: ``choice`` (a letter, number or the choice's text), ``number``, ``node`` (a node id
such as ``3`` or ``#3``, or the node's edge text), ``order`` (the items' letters in order,
e.g. ``c a d b``), ``slots`` (slot numbers: ``3 4 5`` or ``3-5``) and ``text``.
A question may accept more than one answer (``accepted``), each in canonical form.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

LETTERS = "abcdefghijklmnopqrstuvwxyz"
KINDS = ("choice", "number", "node", "order", "slots", "text")


@dataclass(frozen=True)
class Feedback:
    correct: bool
    answer: str          # the right answer as shown to the learner
    explanation: str
    understood: bool = True   # False when the reply could not be read (not counted as wrong)


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
    nodes: tuple = ()            # for ``node``: (node id, edge text) of each node shown
    tree_text: str = ""          # the tree before the asked operation, when the prompt shows it
    lesson: int | None = None
    difficulty: str = "medium"
    seed: int | None = None
    topic: str = ""

    def __post_init__(self):
        assert self.kind in KINDS, self.kind
        assert self.accepted, f"{self.id}: no accepted answer"

    def hint(self) -> str:
        """How to type a reply."""
        return {"choice": f"a letter from a to {LETTERS[len(self.choices) - 1]}",
                "number": "a whole number",
                "node": "a node id such as #3, or its edge text",
                "order": f"the letters in order, e.g. {' '.join(LETTERS[:len(self.choices)])}",
                "slots": "slot numbers, e.g. 3 4 5 or 3-5 (none for no slots)",
                "text": "the tokens, e.g. abc"}[self.kind]

    def example_reply(self) -> str:
        """A reply that grades as right, typed the way the hint asks (for tests and "reveal")."""
        answer = self.accepted[0]
        if self.kind == "choice":
            return LETTERS[int(answer)]
        if self.kind == "node":
            return f"#{answer}"
        if self.kind == "order":
            return " ".join(answer)
        return answer

    def normalize(self, reply: str) -> str | None:
        """The reply in canonical form, or None when it cannot be read."""
        return _NORMALIZERS[self.kind](self, reply.strip())

    def grade(self, reply: str) -> Feedback:
        canonical = self.normalize(reply)
        if canonical is None:
            return Feedback(False, self.answer_text, f"could not read {reply.strip()!r}: type {self.hint()}", False)
        return Feedback(canonical in self.accepted, self.answer_text, self.explanation)


def _choice(q: Question, reply: str) -> str | None:
    low = reply.lower().rstrip(").")
    for index, text in enumerate(q.choices):
        if text.lower() in (reply.lower(), low):   # a choice's own text wins over a letter or number
            return str(index)
    if len(low) == 1 and low in LETTERS[:len(q.choices)]:
        return str(LETTERS.index(low))
    if low.isdigit() and 1 <= int(low) <= len(q.choices):
        return str(int(low) - 1)
    return None


def _number(q: Question, reply: str) -> str | None:
    try:
        value = float(reply.replace(",", ""))
    except ValueError:
        return None
    return str(int(value)) if value == int(value) else str(value)


def _node(q: Question, reply: str) -> str | None:
    text = reply.strip().strip('"\'')
    digits = text.lstrip("#")
    if digits.isdigit() and any(str(n) == digits for n, _ in q.nodes):
        return digits
    matches = [str(n) for n, label in q.nodes if label == text]
    return matches[0] if len(matches) == 1 else None


def _order(q: Question, reply: str) -> str | None:
    parts = re.findall(r"[A-Za-z]|\d+", reply)
    if len(parts) != len(q.choices):
        return None
    letters = []
    for part in parts:
        part = part.lower()
        if part.isdigit():
            if not 1 <= int(part) <= len(q.choices):
                return None
            part = LETTERS[int(part) - 1]
        if part not in LETTERS[:len(q.choices)]:
            return None
        letters.append(part)
    return "".join(letters) if len(set(letters)) == len(letters) else None


def parse_slots(reply: str) -> tuple | None:
    """``3 4 5``, ``3-5``, ``[3, 4, 5]`` or ``none`` as a tuple of ints (None when unreadable)."""
    text = reply.strip().strip("[]()").lower()
    if text in ("", "none", "-", "empty"):
        return ()
    out: list = []
    for part in re.split(r"[\s,]+", text):
        if not part:
            continue
        span = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not span:
            return None
        lo, hi = int(span.group(1)), int(span.group(2) or span.group(1))
        if hi < lo or hi - lo > 10_000:
            return None
        out.extend(range(lo, hi + 1))
    return tuple(out)


def slots_key(slots) -> str:
    return " ".join(str(s) for s in slots)


def _slots(q: Question, reply: str) -> str | None:
    slots = parse_slots(reply)
    return None if slots is None else slots_key(slots)


def _text(q: Question, reply: str) -> str | None:
    return reply.strip().strip('"\'') or None


_NORMALIZERS = {"choice": _choice, "number": _number, "node": _node, "order": _order,
                "slots": _slots, "text": _text}
