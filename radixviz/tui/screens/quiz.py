"""The quiz: one question at a time, graded by the engine, with "show me" in the stepper.

Questions are built in a worker (they run scenarios on the engine, which imports torch),
so the screen paints at once.
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, TypedDict

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from radixviz.lessons.progress import update_progress
from radixviz.lessons.quiz import make_quiz
from radixviz.lessons.quiz.quiz import Quiz
from radixviz.tui.widgets.ordered_input import OrderedInput

LETTERS = "abcdefghijklmnopqrstuvwxyz"


class QuizOptions(TypedDict):
    """What ``make_quiz`` is given, when the screen builds the questions itself."""
    seed: int | None
    difficulty: str
    lesson: int | None
    count: int


if TYPE_CHECKING:
    from textual import getters

    from radixviz.lessons.quiz.questions import Question
    from radixviz.tui.app_base import RadixvizAppBase


class QuizScreen(Screen):
    if TYPE_CHECKING:   # for mypy: this screen runs in the radixviz app (Textual says App[Any])
        app = getters.app(RadixvizAppBase)
    BINDINGS = [
        Binding("f5,ctrl+r", "show_me", "Show me", key_display="F5"),
        Binding("ctrl+s", "skip", "Skip"),
        Binding("escape", "leave", "Leave"),
    ]

    quiz: var[Quiz | None] = var(None, bindings=True)
    """The Quiz once its questions are built (in a worker unless one was given)."""
    finished = var(False, bindings=True)
    """Every question is done: the closing score is on screen."""

    def __init__(self, quiz: Quiz | None = None, *, seed: int | None = None, difficulty: str = "medium",
                 lesson: int | None = None, count: int = 6, save: bool = True, exit_when_done: bool = False):
        super().__init__()
        self.set_reactive(QuizScreen.quiz, quiz)
        self.save = save
        self.options = QuizOptions(seed=seed, difficulty=difficulty, lesson=lesson, count=count)
        self.exit_when_done = exit_when_done
        self.index = 0
        self.answered = False      # the current question has been graded

    def compose(self) -> ComposeResult:
        with Vertical(id="quiz-box"):
            yield Static("quiz: preparing questions on the engine…", id="quiz-status")
            with VerticalScroll(id="quiz-scroll"):
                yield Static("", id="quiz-prompt")
            yield Static("", id="quiz-feedback")
            yield OrderedInput(placeholder="your answer, then enter", id="quiz-answer", disabled=True)
        yield Footer()

    def on_mount(self) -> None:
        if self.quiz is None:
            self._build()
        else:
            self._ready(self.quiz)

    @work(thread=True, exclusive=True, group="quiz")
    def _build(self) -> None:
        seed = self.options["seed"]
        seed = random.SystemRandom().randrange(1, 1_000_000) if seed is None else seed
        quiz = make_quiz(seed, self.options["difficulty"], self.options["lesson"], self.options["count"])
        self.app.call_from_thread(self._ready, quiz)

    def _ready(self, quiz: Quiz) -> None:
        self.quiz = quiz
        answer = self.query_one("#quiz-answer", Input)
        answer.disabled = False
        answer.focus()
        self._show()

    @property
    def ready_quiz(self) -> Quiz:
        """The quiz, where its questions must be built: the answer field is enabled and
        ``check_action`` lets show-me and skip act only once they are."""
        quiz = self.quiz
        if quiz is None:
            raise RuntimeError("the quiz's questions are still being built")
        return quiz

    @property
    def question(self) -> Question:
        return self.ready_quiz.questions[self.index]

    def _show(self) -> None:
        q = self.question
        text = q.prompt
        if q.choices:
            text += "\n\n" + "\n".join(f"  {LETTERS[i]}) {c}" for i, c in enumerate(q.choices))
        self.query_one("#quiz-prompt", Static).update(text)
        self._feedback("", None)
        answer = self.query_one("#quiz-answer", Input)
        answer.value, answer.placeholder = "", f"{q.hint()}, then enter"
        self.answered = False
        self._status()

    def _status(self) -> None:
        quiz = self.ready_quiz
        scope = f"lesson {quiz.lesson}" if quiz.lesson is not None else "all lessons"
        # the score before the settings: at 80 columns the end of the line is cut off
        self.query_one("#quiz-status", Static).update(
            f"Question {self.index + 1}/{len(quiz.questions)} · score {quiz.score}/{len(quiz.answers)}"
            f" · {self.question.topic} · {quiz.difficulty} · {scope} · seed {quiz.seed}")

    def _feedback(self, text: str, right: bool | None) -> None:
        box = self.query_one("#quiz-feedback", Static)
        box.update(text)
        box.set_class(right is True, "right")
        box.set_class(right is False, "wrong")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Showing and skipping need a question: none while they are built or once done."""
        if action in ("show_me", "skip") and (self.quiz is None or self.finished):
            return None
        return True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()   # the answer field is enabled only once the questions are ready
        if self.finished:
            self.action_leave()
            return
        if self.answered:
            self._next()
            return
        if not event.value.strip():
            return
        feedback = self.ready_quiz.answer(self.index, event.value)
        if not feedback.understood:
            self._feedback(feedback.explanation, None)
            return
        self.answered = True
        verdict = "✓ Right." if feedback.correct else \
            f"✗ Not quite ({feedback.reason}): the answer is {feedback.answer}."
        self._feedback(f"{verdict} {feedback.explanation}\n(enter: next question · F5: show me in the stepper)",
                       feedback.correct)
        self._status()

    def _next(self) -> None:
        if self.index + 1 < len(self.ready_quiz.questions):
            self.index += 1
            self._show()
        else:
            self._finish()

    def _finish(self) -> None:
        self.finished = True
        quiz = self.ready_quiz
        self.query_one("#quiz-prompt", Static).update(
            f"Done: {quiz.summary()} right.\n\n"
            f"The same questions again: radixviz quiz --seed {quiz.seed} --difficulty {quiz.difficulty}")
        self._feedback("enter or esc to leave", None)
        if self.save and quiz.answers:
            saved, warnings = update_progress(
                lambda p: p.record_score(quiz.score, quiz.total, quiz.difficulty, quiz.lesson, quiz.seed))
            if warnings:
                self.notify(warnings[-1], markup=False, severity="warning" if saved else "error", timeout=6)

    def action_skip(self) -> None:
        if not self.answered:
            self.ready_quiz.skip(self.index)
            self.notify(f"Skipped (counts as not right): the answer was {self.question.answer_text}",
                        timeout=4)
        self._next()

    def action_show_me(self) -> None:
        """Replay the scenario in the stepper: only the set-up until the question is answered."""
        scenario = self.question.scenario
        if not self.answered:
            scenario = scenario.split("# the question:")[0]
        # the stepper screens and their Textual widgets load when show-me is first pressed
        from radixviz.tui.screens.side_sandbox import QuizShowMe
        title = f"quiz question {self.index + 1}" + ("" if self.answered else " (set-up only)")
        self.app.open_sandbox(script_text=scenario, title=title, screen_class=QuizShowMe)

    def action_leave(self) -> None:
        if self.quiz is not None and not self.finished and self.quiz.answers:
            self._finish()            # keep the score of what was answered
            # the screen closes now, so the score that _finish shows would flash by
            self.notify(f"quiz: {self.quiz.summary()} right", timeout=5)
        if self.exit_when_done:
            self.app.exit()
        else:
            self.app.pop_screen()

