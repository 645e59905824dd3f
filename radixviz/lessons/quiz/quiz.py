"""A quiz: which questions, in which order, and its score. No input or output here.

``make_quiz(seed, difficulty, lesson=None, count=6, selftest=False) -> Quiz`` gives the same
questions for the same arguments. With ``lesson`` the lesson's fixed questions come first and
generated ones on its topics follow; ``selftest`` asks the chapter's self-test questions and
exercises (all fixed). Each Question carries ``scenario`` (operation text) for "show me".
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .fixed import fixed_questions
from .generate import DIFFICULTIES, LESSON_TOPICS, generate_question
from .questions import Feedback, Question


@dataclass
class Quiz:
    questions: list
    difficulty: str
    seed: int
    lesson: int | None = None
    answers: list = field(default_factory=list)     # Feedback per question answered or skipped
    selftest: bool = False       # the chapter's fixed questions: seed and difficulty play no part

    @property
    def score(self) -> int:
        return sum(1 for f in self.answers if f.correct)

    @property
    def total(self) -> int:
        """What the score is out of: every question of the quiz. A skipped question, or one
        never reached because the learner left, is not right."""
        return len(self.questions)

    @property
    def skipped(self) -> int:
        return sum(1 for f in self.answers if f.skipped)

    def answer(self, index: int, reply: str) -> Feedback:
        """Grade ``reply`` (typed text or a ``grading.Chosen``) to question ``index``;
        unreadable replies are not recorded."""
        feedback = self.questions[index].grade(reply)
        if feedback.understood:
            self.answers.append(feedback)
        return feedback

    def skip(self, index: int) -> Feedback:
        """The learner passes on question ``index``: recorded as not right."""
        feedback = self.questions[index].skip()
        self.answers.append(feedback)
        return feedback

    def summary(self) -> str:
        """``3/6 (3 skipped)``: skipped and unanswered questions count as not right."""
        unanswered = self.total - len(self.answers)
        notes = [f"{self.skipped} skipped"] if self.skipped else []
        notes += [f"{unanswered} not answered"] if unanswered else []
        return f"{self.score}/{self.total}" + (f" ({', '.join(notes)})" if notes else "")


def make_quiz(seed: int, difficulty: str = "medium", lesson: int | None = None, count: int = 6,
              selftest: bool = False) -> Quiz:
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}: use easy, medium or hard")
    if lesson is not None and lesson not in LESSON_TOPICS:
        raise ValueError(f"no quiz for lesson {lesson}: lessons are {min(LESSON_TOPICS)}-{max(LESSON_TOPICS)}")
    if selftest:
        return Quiz(fixed_questions(), difficulty, seed, lesson, selftest=True)
    questions: list[Question] = fixed_questions(lesson)[:count] if lesson is not None else []
    index = 0
    while len(questions) < count:
        questions.append(generate_question(seed * 1000 + index, difficulty, lesson=lesson))
        index += 1
    return Quiz(questions, difficulty, seed, lesson)
