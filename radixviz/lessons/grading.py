"""The one grader: lesson predictions (in the app and in ``lessons --read``) and quiz questions.

An answer is described by an ``Expected``: its ``kind``, the canonical forms it accepts,
and for a multiple choice its options. A reply is either typed text or ``Chosen(index)``:
an option the learner picked from a list. A picked option is graded by its identity —
its index is never turned back into text, where "2" could be read as the option "2".

Typed replies are read forgivingly, in the forms the app itself prints:

====== ===================================================  ==========================
kind   accepted                                             canonical form
====== ===================================================  ==========================
number ``6``, ``6 tokens``, ``−3``, ``6 ('Hello_')``          ``"6"``
slots  ``4 5``, ``5 4``, ``4,5``, ``22-26``, ``22–26``,        ``"4 5"`` (a set: sorted)
       ``[22, 23]``, ``none``
list   ``cd ab``, ``cd, ab``, ``"cd" → "ab"`` (order counts)  ``"cd ab"``
text   ``Hello_``, ``"Hello_"``, ``"Hello_" (6 tokens)``;     the tokens, or ``"6"``
       a count (``6 tokens``) where the count is accepted
choice the option's letter (``b``, ``b)``, ``b: ...``), the   the option's index
       option's text read as its own kind (``22–26`` picks
       the option ``22 23 24 25 26``), the one number an option
       carries (``1`` picks ``worker 1``), or its 1-based number
       when no option has a digit in it
order  ``c a d b``, ``cadb``, ``3 1 4 2``                      ``"cadb"``
node   ``#3``, ``3``, the whole key from the root, or the     the node id
       edge text when no other node has the same text
====== ===================================================  ==========================

``grade(expected, reply) -> Verdict``: ``correct``; ``understood`` (False when the reply
could not be read at all — not counted as wrong, the learner is asked again) and
``reason``, one line that says what is wrong with the reply without giving the answer away.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

LETTERS = "abcdefghijklmnopqrstuvwxyz"
KINDS = ("number", "slots", "list", "text", "choice", "order", "node")

_DASHES = "\u2013\u2014\u2212"   # en dash, em dash, minus sign: the app prints the first
_NUMBER = re.compile(r"^([+-]?\d+(?:\.\d+)?)\s*(?:tokens?|slots?|nodes?|leaves|leaf|toks?)?"
                     r"\s*(?:\(.*\))?\s*\.?$", re.IGNORECASE)
_APP_TEXT = re.compile(r'^["\'](.*)["\']\s*(?:\(\s*\d+\s*tokens?\s*\))?$')
_LETTER_LEAD = re.compile(r"^([a-z])\s*[):.]\s*(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class Chosen:
    """An option picked from a list (by its 0-based index): graded by identity."""
    index: int


@dataclass(frozen=True)
class Verdict:
    correct: bool
    understood: bool = True
    reason: str = ""             # why it is wrong or unreadable; "" when right


@dataclass(frozen=True)
class Expected:
    """What a question accepts. ``accepted`` holds canonical forms (see the module doc).

    For ``choice``, ``accepted`` holds option indexes as text and ``choices`` the options;
    for ``order``, ``choices`` are the items to order; for ``node``, ``nodes`` holds
    ``(id, edge text, whole key from the root)`` of every node the learner can name.
    """
    kind: str
    accepted: tuple
    choices: tuple = ()
    nodes: tuple = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown answer kind {self.kind!r}")
        if not self.accepted:
            raise ValueError("an answer needs at least one accepted form")

    def hint(self) -> str:
        """How to type a reply, for prompts and for unreadable replies."""
        if self.kind == "choice":
            last = LETTERS[len(self.choices) - 1]
            return f"a letter from a to {last}, or the option itself"
        return {"number": "a whole number, e.g. 6 (a unit such as 'tokens' may follow)",
                "slots": "slot numbers in any order, e.g. 4 5 or 22-26 (none for no slots)",
                "list": "the items in order, separated by spaces or commas, e.g. cd ab",
                "text": "the tokens, e.g. abc",
                "order": f"the letters in order, e.g. {' '.join(LETTERS[:len(self.choices)])}",
                "node": "the node's number as the tree shows it (#3), or its whole key from the root",
                }[self.kind]

    def example_reply(self) -> str:
        """A typed reply that grades as right, in the form the hint asks for."""
        answer = self.accepted[0]
        if self.kind == "choice":
            return LETTERS[int(answer)]
        if self.kind == "node":
            return f"#{answer}"
        if self.kind == "order":
            return " ".join(answer)
        if self.kind == "slots" and not answer:
            return "none"
        return answer


def grade(expected: Expected, reply: str | Chosen) -> Verdict:
    """Grade a typed reply (str) or a picked option (``Chosen``) against ``expected``."""
    if isinstance(reply, Chosen):
        if expected.kind != "choice" or not 0 <= reply.index < len(expected.choices):
            raise ValueError(f"option {reply.index} cannot answer this question")
        if str(reply.index) in expected.accepted:
            return Verdict(True)
        return Verdict(False, reason=f"not {expected.choices[reply.index]!r}")
    text = str(reply).strip()
    if not text:
        return Verdict(False, False, f"nothing typed: type {expected.hint()}")
    canonical, problem = read_reply(expected, text)
    if canonical is None:
        return Verdict(False, False, problem or f"could not read {text!r}: type {expected.hint()}")
    if canonical in expected.accepted:
        return Verdict(True)
    return Verdict(False, reason=_why_wrong(expected, canonical))


def read_reply(expected: Expected, text: str) -> tuple[str | None, str]:
    """(the reply in canonical form or None, a reason when it could not be read)."""
    return _READERS[expected.kind](expected, text.strip())


# ------------------------------------------------------------------ readers


def read_number(text: str) -> str | None:
    text = _plain_dashes(text).strip().strip("\"'")
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+", text.split()[0] if text.split() else ""):
        text = text.replace(",", "", text.count(","))
    found = _NUMBER.match(text)
    if not found:
        return None
    value = float(found.group(1))
    return str(int(value)) if value == int(value) else str(value)


def read_slots(text: str) -> tuple | None:
    """Slot numbers as a sorted tuple: ``4 5``, ``5,4``, ``22-26``, ``22–26``, ``none``."""
    text = _plain_dashes(text).strip().lower()
    text = re.sub(r"^slots?\s*:?\s*", "", text).strip("[](){} ")
    if text in ("", "none", "-", "empty", "no slots", "nothing"):
        return ()
    out: set = set()
    for part in re.split(r"[\s,;]+", text):
        if not part:
            continue
        span = re.fullmatch(r"(\d+)(?:(?:-|\.\.)(\d+))?", part)
        if not span:
            return None
        lo, hi = int(span.group(1)), int(span.group(2) or span.group(1))
        if hi < lo or hi - lo > 10_000:
            return None
        out.update(range(lo, hi + 1))
    return tuple(sorted(out))


def slots_key(slots: Iterable[int]) -> str:
    """Canonical text of a set of slots."""
    return " ".join(str(s) for s in sorted(slots))


def read_list(text: str) -> str | None:
    parts = [p.strip("\"'") for p in re.split(r"[\s,;]+|→|->", text) if p.strip("\"' ")]
    return " ".join(parts) or None


def read_text(text: str) -> str | None:
    shown = _APP_TEXT.match(text.strip())
    if shown:
        return shown.group(1) or None
    return text.strip().strip("\"'") or None


def _number(e: Expected, text: str):
    value = read_number(text)
    return value, ("" if value is not None else f"could not read {text!r} as a number: type {e.hint()}")


def _slots(e: Expected, text: str):
    slots = read_slots(text)
    return (None, f"could not read {text!r} as slot numbers: type {e.hint()}") if slots is None \
        else (slots_key(slots), "")


def _list(e: Expected, text: str):
    return read_list(text), ""


def _text(e: Expected, text: str):
    if not _APP_TEXT.match(text.strip()):
        count = read_number(text)
        if count is not None and count in e.accepted:   # "6 tokens" where a count is accepted
            return count, ""
    return read_text(text), ""


def _choice(e: Expected, text: str):
    option = _option_by_text(e.choices, text)
    if option is not None:
        return str(option), ""
    lead = _LETTER_LEAD.match(text)
    letter = text.lower() if len(text) == 1 else (lead.group(1).lower() if lead else None)
    if letter and letter in LETTERS[:len(e.choices)]:
        index = LETTERS.index(letter)
        rest = lead.group(2).strip() if lead and len(text) > 1 else ""
        if rest and _option_by_text(e.choices, rest) not in (None, index):
            return None, f"{text!r}: letter {letter} is not that option"
        return str(index), ""
    if text.isdigit():
        # an option that carries a number ("worker 1") is named by that number, never by
        # its place in the list: "1" is worker 1, not the first option
        named = [i for i, c in enumerate(e.choices) if re.findall(r"\d+", c) == [str(int(text))]]
        if any(re.search(r"\d", c) for c in e.choices):
            if len(named) == 1:
                return str(named[0]), ""
        elif 1 <= int(text) <= len(e.choices):
            return str(int(text) - 1), ""
    return None, f"could not read {text!r}: it is none of the options; type {e.hint()}"


def _option_by_text(choices: tuple, text: str) -> int | None:
    """The option whose text the reply is, each option read as what it is (number, slots…),
    or the one option that quotes the reply (``greetings!`` picks ``A, "greetings!"``)."""
    for read in (lambda t: t.strip().strip("\"'").lower(), read_number, read_slots):
        wanted = read(text)
        if wanted is None:
            continue
        for index, choice in enumerate(choices):
            if read(choice) is not None and read(choice) == wanted:
                return index
    plain = text.strip().strip("\"'").lower()
    quoting = [i for i, choice in enumerate(choices) if re.findall(r'"([^"]+)"', choice.lower()) == [plain]]
    return quoting[0] if len(quoting) == 1 else None


def _order(e: Expected, text: str):
    text = text.split(":")[0]       # "c a d b: heap, pop, ..." as the feedback shows it
    parts = re.findall(r"[A-Za-z]|\d+", text)
    n = len(e.choices)
    if len(parts) != n:
        return None, f"{text!r}: give all {n} letters in order, each once, e.g. {' '.join(LETTERS[:n])}"
    letters = []
    for part in parts:
        part = part.lower()
        if part.isdigit():
            if not 1 <= int(part) <= n:
                return None, f"{part} is not an item: the items are a to {LETTERS[n - 1]}"
            part = LETTERS[int(part) - 1]
        if part not in LETTERS[:n]:
            return None, f"{part} is not an item: the items are a to {LETTERS[n - 1]}"
        letters.append(part)
    if len(set(letters)) != n:
        return None, f"{text!r}: give each of the {n} letters once"
    return "".join(letters), ""


def _node(e: Expected, text: str):
    text = text.strip()
    by_id = re.match(r"^#?(\d+)(?:\s|$|[\"'])", text + " ")
    if by_id and any(str(n) == by_id.group(1) for n, _, _ in e.nodes):
        return by_id.group(1), ""
    if by_id and text.startswith("#"):
        return None, f"there is no node #{by_id.group(1)} in the tree"
    label = text.strip("\"'")
    whole = [str(n) for n, _, key in e.nodes if key == label]   # whole keys never repeat
    if whole:
        return whole[0], ""
    named = [str(n) for n, edge_text, _ in e.nodes if edge_text == label]
    if len(named) == 1:
        return named[0], ""
    if named:
        return None, (f"{len(named)} nodes have the edge {label!r}: name the one you mean by its "
                      "number or its whole key from the root")
    return None, f"no node has the edge or key {label!r}: type {e.hint()}"


_READERS = {"number": _number, "slots": _slots, "list": _list, "text": _text, "choice": _choice,
            "order": _order, "node": _node}


def _why_wrong(e: Expected, canonical: str) -> str:
    """One line about a readable but wrong reply, without giving the answer away."""
    right = e.accepted[0]
    if e.kind == "slots":
        mine, theirs = set(canonical.split()), set(right.split())
        if mine < theirs:
            return "some of the slots are missing"
        if mine > theirs:
            return "that includes slots that are not part of the answer"
        return "not those slots"
    if e.kind == "list":
        if sorted(canonical.split()) == sorted(right.split()):
            return "the right items, but not in the order they happen"
        return "not those items"
    if e.kind == "order":
        return "not in that order"
    if e.kind == "choice":
        return f"not {e.choices[int(canonical)]!r}"
    if e.kind == "node":
        return f"not node #{canonical}"
    if e.kind == "number" and read_number(right) is not None:
        return f"{canonical} is {'too many' if float(canonical) > float(right) else 'too few'}"
    return f"not {canonical!r}"


def _plain_dashes(text: str) -> str:
    for dash in _DASHES:
        text = text.replace(dash, "-")
    return text
