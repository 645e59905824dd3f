"""The pieces a lesson is made of. Immutable, so the app can hold them across screens."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


class LessonError(Exception):
    """A problem in a lesson file: prints as ``FILE:LINE: message``."""

    def __init__(self, file: str, line: int, message: str):
        super().__init__(f"{file}:{line}: {message}")
        self.file, self.line, self.message = str(file), line, message


@dataclass(frozen=True)
class Narrative:
    """Markdown text shown between operations (blank lines at either end trimmed)."""
    text: str
    line: int                    # file line of the first line of ``text``


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
    ``check``, when set, names what ``--check`` compares the answer with after running the
    next operations block: a field of the first operation's result (``matched``,
    ``prefix_len``, ``delta``, ``evicted``, ``matched_text``, ``last_node``,
    ``disagreement.buggy``...), ``evicted_leaves`` (the edges that operation deleted, in
    order) or a state after the whole block (``evictable_size``, ``total_size``,
    ``free_slots``, ``nodes``). Lists compare as space-separated text.
    """
    question: str
    choices: tuple
    answer: str
    line: int                    # file line of the ```predict fence
    check: str | None = None
    explain: str = ""

    def accepts(self, reply: str) -> bool:
        """True when ``reply`` is the answer, its choice number, or its letter."""
        reply = reply.strip().lower()
        if not reply:
            return False
        if reply == self.answer.strip().lower():
            return True
        if reply in (c.strip().lower() for c in self.choices):
            # a choice's own text: with choices "2 | 3 | 4", "2" means two, not the second
            return False
        if self.choices and self.answer in self.choices:
            index = self.choices.index(self.answer)
            return reply in (str(index + 1), "abcdefghij"[index])
        return False


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
    def script(self) -> str:
        """The lesson's operations as one script (for the stepper or ``radixviz run``)."""
        return "\n".join(b.text for b in self.blocks if isinstance(b, Operations))
