"""The pieces a lesson is made of. Immutable, so the app can hold them across screens."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..grading import Chosen, Expected, Verdict, grade, read_number, read_reply


class LessonError(Exception):
    """A problem in a lesson file: prints as ``FILE:LINE: message``.

    ``problems`` lists every problem found in the file (this one first), so ``--check``
    can report them all rather than only the first.
    """

    def __init__(self, file: str, line: int, message: str, more: tuple = ()) -> None:
        super().__init__(f"{file}:{line}: {message}")
        self.file, self.line, self.message = str(file), line, message
        self.problems = [self, *more]


@dataclass(frozen=True)
class Pointer:
    """What a paragraph points at on screen, written ``<!-- show: ... -->`` after the words
    that point (``pointers.py`` finds it in a frame; the app brings it into view):

    ``node "TEXT"``      the tree's node whose key from the root, or whose edge, is TEXT;
    ``slots 3 4``        the device pool's rows that hold those slots (``0-9`` for a range);
    ``host-slots 3 4``   the host pool's rows that hold those slots;
    ``tree "TEXT"``, ``pool "TEXT"``  the first line of that pane that reads TEXT.
    """
    kind: str                    # node, slots, host-slots, tree, pool
    target: str | tuple          # the text, or the slots as a sorted tuple
    line: int                    # file line of the mark
    sentence: str                # the words just before the mark (what points)

    @property
    def pane(self) -> str:
        """Which pane shows it: "tree" or "pool"."""
        return "tree" if self.kind in ("node", "tree") else "pool"


@dataclass(frozen=True)
class Narrative:
    """Markdown text shown between operations (blank lines at either end trimmed).

    ``text`` is what every reader shows (``--read``, the HTML export); ``app_text`` adds the
    passages marked ``<!-- app -->…<!-- /app -->``, which only make sense inside the app
    ("Press v now"). They are the same when the block has no such passage.
    """
    text: str
    line: int                    # file line of the first line of ``text``
    app_text: str | None = None
    pointers: tuple = ()         # Pointer: what these paragraphs point at on screen

    @property
    def in_app(self) -> str:
        """The text as the app shows it, app-only passages included."""
        return self.text if self.app_text is None else self.app_text


@dataclass(frozen=True)
class Operations:
    """A fenced ```radixviz block: operations the stepper plays, in one continuing session."""
    text: str                    # the block's lines, as written
    line: int                    # file line of the first operation line (after the fence)
    ops: tuple                   # radixviz.script.Op, each with the file's own line numbers


@dataclass(frozen=True)
class Predict:
    """A pause before the next operations: the learner guesses, then the engine shows.

    ``choices`` may be empty (a free answer). ``answer`` is the expected answer as text.
    ``check`` names what the engine's answer is read from once the next operations block
    has run (``checker.hold_to_engine``; ``--check`` refuses a prediction without one): a
    field of the first operation's result (``matched``, ``prefix_len``, ``delta``,
    ``evicted``, ``matched_text``, ``last_node``, ``disagreement.buggy``...), the frames of
    that operation (``evicted_leaves``, ``host_deleted``, ``loaded_wrong_kv``...)
    or a state after the whole block (``evictable_size``, ``total_size``,
    ``free_slots``, ``nodes``). Lists compare as space-separated text.
    """
    question: str
    choices: tuple
    answer: str
    line: int                    # file line of the ```predict fence
    check: str | None = None
    explain: str = ""

    @property
    def expected(self):
        """What this prediction accepts, for the one grader (``radixviz.lessons.grading``)."""
        if self.choices:
            return Expected("choice", (str(self.choices.index(self.answer)),), choices=self.choices)
        kind = CHECK_KINDS.get(self.check or "")
        if kind is None:
            kind = "number" if read_number(self.answer) is not None else "text"
        canonical, _ = read_reply(Expected(kind, (self.answer,)), self.answer)
        return Expected(kind, (canonical or self.answer,))

    def grade(self, reply: str | Chosen) -> Verdict:
        """A ``grading.Verdict`` for a typed reply or a ``grading.Chosen`` option."""
        return grade(self.expected, reply)

    @property
    def reply_form(self) -> str:
        """What a typed reply looks like, for a prompt: "a number of tokens, e.g. 6"."""
        if self.choices:
            return f"a letter from a to {'abcdefghij'[len(self.choices) - 1]}, or the option itself"
        kind = self.expected.kind
        if kind == "number":
            return NUMBER_FORMS.get(self.check or "", "a number, e.g. 6")
        return {"slots": "slots, e.g. 3 4 5 (or 3-5; none for no slots)",
                "list": "the edges in order, e.g. cd ab",
                "text": "the tokens, e.g. Hello_"}.get(kind, "your answer")

    def accepts(self, reply: str) -> bool:
        """True when ``reply`` (typed text, or a ``Chosen`` option) is the answer."""
        return self.grade(reply).correct


# what kind of answer each ``check`` asks for (anything else: a number if it reads as one)
CHECK_KINDS = {
    **dict.fromkeys(("matched", "prefix_len", "delta", "evicted", "nodes", "total_size",
                     "evictable_size", "free_slots", "disagreement.buggy", "disagreement.fixed",
                     "host_hit_length", "loaded", "acknowledged", "acknowledged_first", "host_used",
                     "in_flight", "host_only_nodes", "protected_size", "host_leaves",
                     "stray_host_slots", "double_freed", "loaded_wrong_kv"),
                    "number"),
    **dict.fromkeys(("slots", "new_slots", "freed_duplicates", "freed_slots",
                     "disagreement.wrong_slots"), "slots"),
    "evicted_leaves": "list",
    "demoted_leaves": "list",
    "host_deleted": "list",
    "split_edges": "list",
    "matched_text": "text",
}
TOKENS = "a number of tokens, e.g. 6"
NUMBER_FORMS = {
    **dict.fromkeys(("matched", "prefix_len", "evicted", "total_size", "evictable_size",
                     "protected_size", "disagreement.buggy", "disagreement.fixed"), TOKENS),
    "nodes": "a number of nodes, e.g. 3",
    "free_slots": "a number of slots, e.g. 12",
    "delta": "a change in tokens, e.g. -5 or 5",
}


@dataclass(frozen=True)
class Lesson:
    id: str
    number: int
    title: str
    path: Path
    blocks: tuple = field(default=())
    shipped: bool = True         # False for a teacher's own (``--lessons DIR``)

    @property
    def operations(self) -> tuple:
        """Every operation of the lesson in playing order."""
        return tuple(op for block in self.blocks if isinstance(block, Operations) for op in block.ops)

    @property
    def pages(self) -> tuple[int, ...]:
        """The page (0-based) each block is shown on: a page starts at a paragraph that
        follows operations (a prediction between them keeps the page), as the app walks it."""
        pages, page, after_ops = [], 0, False
        for block in self.blocks:
            if isinstance(block, Narrative):
                page += after_ops
                after_ops = False
            elif isinstance(block, Predict):
                after_ops = False      # the question's lead-in and the question share a page
            else:
                after_ops = True
            pages.append(page)
        return tuple(pages)

    def place_of(self, block: int) -> str:
        """Where block ``block`` is, in the words the app shows: "page 4 of 9"."""
        pages = self.pages
        if not pages:
            return "the start"
        return f"page {pages[min(max(block, 0), len(pages) - 1)] + 1} of {pages[-1] + 1}"

    @property
    def script(self) -> str:
        """The lesson's operations as one script (for the stepper or ``radixviz run``)."""
        return "\n".join(b.text for b in self.blocks if isinstance(b, Operations))

    @property
    def predictions(self) -> int:
        """How many predictions the lesson asks."""
        return sum(isinstance(b, Predict) for b in self.blocks)
