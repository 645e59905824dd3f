"""Plays a lesson's blocks into a stepper: narrative text, operations, predictions.

UI-free: the stepper asks ``advance()`` for the next thing to do when the learner steps
past the last frame.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Ask:
    """A prediction to put to the learner before the next operations run."""
    block: object              # the lesson's Predict

    @property
    def question(self) -> str:
        return self.block.question

    @property
    def choices(self) -> tuple:
        return tuple(self.block.choices)


class LessonPlayer:
    def __init__(self, lesson):
        self.lesson = lesson
        self.index = -1            # the block last played
        self.text = ""             # the narrative in force
        self.explain = ""          # the last prediction's explanation, shown after its ops
        self.right = self.asked = 0   # predictions graded right, predictions put to the learner
        self.completed = False     # reached the end (recorded once in the learner's progress)
        # the lesson text in force when each operation ran (by record index), so stepping
        # back to an earlier frame shows that frame's text, not a later prediction's answer
        self._text_at: dict[int, str] = {}
        self._first_with_text: set[int] = set()   # the op that first showed its text

    def text_for(self, frame) -> tuple[str, bool]:
        """(the lesson text for ``frame``, whether to show it in full).

        Before any step the text in force shows in full. A frame shows the text that was in
        force when its operation ran: in full on the first operation after that text
        appeared, and as a short reminder on the operations after it, so the narration
        leads with the step itself instead of repeating the same paragraphs every step.
        """
        if frame is None:
            return self.text, True
        text = self._text_at.get(frame.op_index, self.text)
        return text, frame.op_index in self._first_with_text

    def record(self, verdict) -> None:
        """A prediction's outcome: a grading.Verdict, or None when the learner skipped it."""
        self.asked += 1
        self.right += bool(verdict is not None and verdict.correct)

    @property
    def done(self) -> bool:
        return self.index >= len(self.lesson.blocks) - 1

    @property
    def progress(self) -> tuple[str, str]:
        """Where the learner is, long and short (the status line picks what fits)."""
        block, blocks = max(self.index + 1, 0), len(self.lesson.blocks)
        return f"lesson {self.lesson.number} · block {block} of {blocks}", f"block {block}/{blocks}"

    def advance(self, model):
        """Play blocks until something shows: returns an Ask, the Applied of ops, or None at the end.

        Narrative blocks only change ``text``; they stop the walk so the learner reads them.
        """
        while not self.done:
            self.index += 1
            block = self.lesson.blocks[self.index]
            kind = type(block).__name__
            if kind == "Narrative":
                self.text = block.text.strip()
                return "narrative"
            if kind == "Predict":
                self.explain = f"Answer: {block.answer}. {block.explain}".strip()
                return Ask(block)
            if kind == "Operations":
                first = len(model.session.records)
                applied = model.apply_ops(block.ops)
                if self.explain:
                    # the answer to the last prediction reads best once its steps are on screen
                    self.text, self.explain = f"{self.text}\n\n{self.explain}".strip(), ""
                if self.text not in (self._text_at.get(first - 1), None) or first == 0:
                    self._first_with_text.add(first)
                for index in range(first, len(model.session.records)):
                    self._text_at[index] = self.text
                return applied
        return None

    def fast_forward(self, model, block: int, right: int = 0, asked: int = 0) -> None:
        """Replay the blocks up to ``block`` without asking anything (resuming a lesson left
        there); the prediction score so far comes back from the saved progress."""
        while self.index < min(block, len(self.lesson.blocks) - 1):
            self.advance(model)       # an Ask is passed over: it was answered last time
        self.right, self.asked = right, asked

    @staticmethod
    def is_right(ask: Ask, reply) -> bool:
        """``reply``: typed text, or a ``grading.Chosen`` option (graded by identity)."""
        return ask.block.accepts(reply)
