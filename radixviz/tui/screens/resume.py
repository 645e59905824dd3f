"""Opening a lesson left before its end: resume there, or start over.

esc keeps the learner's place: the safe choice is the one a stray key makes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from radixviz.lessons import Lesson


class ResumeScreen(ModalScreen):
    """Dismisses with True to resume at the saved place, False to start from the beginning."""

    BINDINGS = [Binding("escape", "resume", "Keep my place")]

    def __init__(self, lesson: Lesson, block: int):
        super().__init__()
        self.lesson, self.block = lesson, block

    def compose(self) -> ComposeResult:
        place = self.lesson.place_of(self.block)
        with Vertical(id="resume-box"):
            yield Static(f"You left lesson {self.lesson.number} at {place}.", id="resume-question")
            yield OptionList(Option(f"Resume at {place.split(' of ')[0]}", id="resume"),
                             Option("Start from the beginning", id="start"), id="resume-choices")
            yield Static("↑/↓ and enter · esc keeps your place", classes="hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id == "resume")

    def action_resume(self) -> None:
        self.dismiss(True)
