"""A sandbox opened from another screen, which h (and esc) go back to, as it was left.

Two kinds: a lesson's sandbox copy, where typing, undo and the other matcher take the
learner (the lesson keeps its own operations, so its predictions are always answered on
its own tree), and a quiz question's "show me".
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from textual.binding import Binding

from radixviz.tui.screens.stepper import StepperScreen
from radixviz.tui.screens.stepper_keys import STEPPER_KEYS

if TYPE_CHECKING:
    from collections.abc import Callable

    from radixviz.lessons.lesson.model import Lesson
    from radixviz.tui.stepper_model import StepperModel


class LessonShown(Protocol):
    """What a sandbox copy reads of the lesson screen it opens from: lesson.py imports this
    module, so the copy types that screen by its shape, not its class."""
    lesson: Lesson
    export_dir: Path

    @property
    def loaded(self) -> StepperModel: ...


def keys_back_to(label: str, where: str) -> list:
    """The stepper's keys with h going back to ``where`` (shown as ``label``)."""
    back = Binding("h", "home", label, tooltip=f"back to {where} (esc too, with no input open)")
    return [back if binding.action == "home" else binding for binding in STEPPER_KEYS]


class SideSandbox(StepperScreen):
    """``back_to`` names the screen under this one, for the status line and the dialogs."""

    back_to = "the screen before"

    def status_notes(self) -> list:
        return [(f"h: back to {self.back_to}", "h: back")] + super().status_notes()

    def action_home(self) -> None:
        self.leave_then(self._go_back, self.back_to)

    def _go_back(self) -> None:
        self.playing = False
        self.dismiss()

    def action_close_input(self) -> None:
        """esc closes the operation input; with none open it goes back."""
        field = self.query_one("#op-input")
        if field.display or self.query_one("#op-error").display:
            super().action_close_input()
        else:
            self.action_home()


class QuizShowMe(SideSandbox):
    """A quiz question's scenario in the stepper; h or esc returns to the quiz. A replay of
    the question, not the learner's work: leaving never asks to save it (ctrl+s still can)."""

    BINDINGS = keys_back_to("Quiz", "the quiz")
    back_to = "the quiz"
    ASK_BEFORE_LEAVING = False


class LessonCopy(SideSandbox):
    """A copy of a lesson's session, opened at the step the lesson shows, where ``then`` (an
    action name, or ("node", choice) from the node picker) is carried out."""

    BINDINGS = keys_back_to("Lesson", "the lesson, where you left it")

    def __init__(self, lesson_screen: LessonShown, then: str | tuple[str, tuple[str, int]]):
        session = lesson_screen.loaded.session
        self.lesson_screen = lesson_screen
        self.then: str | tuple[str, tuple[str, int]] | None = then
        self.lesson_ops = list(session.ops)
        self.back_to = f"lesson {lesson_screen.lesson.number}"
        self._at = lesson_screen.loaded.position
        super().__init__(lambda: (session.replay(), None),
                         title=f"lesson {lesson_screen.lesson.number}, sandbox copy",
                         export_dir=lesson_screen.export_dir)

    def status_notes(self) -> list:
        return [("sandbox copy", "copy")] + super().status_notes()

    def watch_model(self, model: StepperModel | None) -> None:
        if model is None:
            return
        model.go(self._at)
        self.model_changed()
        self.notify(f"A sandbox copy of lesson {self.lesson_screen.lesson.number}: try anything "
                    "here, the lesson keeps its own operations. h goes back to it, where you left it.",
                    timeout=6)
        then, self.then = self.then, None
        if isinstance(then, tuple):
            self._node_action(then[1])
        elif then:
            getattr(self, f"action_{then}")()

    def leave_then(self, go: Callable[[], None], where: str) -> None:
        """Going back loses nothing while the copy only holds the lesson's own operations
        (viewed, or some taken back); operations added here are asked about."""
        ops = self.model.session.ops if self.model is not None else []
        if ops == self.lesson_ops[:len(ops)]:
            if self.sandbox_work is not None:
                self.sandbox_work.discard_autosave()
            go()
        else:
            super().leave_then(go, where)
