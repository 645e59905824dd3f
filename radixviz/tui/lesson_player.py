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
                applied = model.apply_ops(block.ops)
                if self.explain:
                    # the answer to the last prediction reads best once its steps are on screen
                    self.text, self.explain = f"{self.text}\n\n{self.explain}".strip(), ""
                return applied
        return None

    @staticmethod
    def is_right(ask: Ask, reply) -> bool:
        """``reply``: typed text, or a ``grading.Chosen`` option (graded by identity)."""
        return ask.block.accepts(reply)
