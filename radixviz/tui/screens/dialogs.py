"""Small dialogs of the stepper: leave or stay, a file name, the KV check's report.

Each is a ModalScreen that answers through ``dismiss``: the stepper's callbacks act on the
answer, so nothing is lost while a dialog is open.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class ConfirmLeave(ModalScreen[str | None]):
    """Leaving a sandbox that has operations: ``save``, ``leave`` or None (stay)."""

    BINDINGS = [Binding("s,ctrl+s", "answer('save')", "Save first"),
                Binding("l,y", "answer('leave')", "Leave"),
                Binding("escape,n", "answer(None)", "Stay")]

    def __init__(self, operations: int, where: str = "the home screen"):
        super().__init__()
        self.operations, self.where = operations, where

    def compose(self) -> ComposeResult:
        count = f"{self.operations} operation{'s' if self.operations != 1 else ''}"
        with Vertical(id="dialog-box") as box:
            box.border_title = "Leave the sandbox?"
            yield Static(Text(f"This sandbox holds {count}; leaving for {self.where} drops them.\n\n"
                              "s  save them as a script first\n"
                              "l  leave without saving\n"
                              "esc  stay here"))

    def action_answer(self, answer: str | None) -> None:
        self.dismiss(answer)


class AskPath(ModalScreen[str | None]):
    """One line of text, usually a file name: enter answers it, esc answers None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", hint: str = ""):
        super().__init__()
        self.title_text, self.value, self.hint = title, value, hint

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-box") as box:
            box.border_title = self.title_text
            if self.hint:
                yield Static(Text(self.hint, style="dim"))
            yield Input(self.value, id="dialog-input")
            yield Static("", id="dialog-error")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class KVReport(ModalScreen[None]):
    """The KV check's report, one block per match, until the learner closes it."""

    BINDINGS = [Binding("escape,enter,v,q", "close", "Close")]

    def __init__(self, lines: list[str]):
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="kv-box") as box:
            box.border_title = "KV check (esc closes)"
            yield Static(Text("\n".join(self.lines)), id="kv-report")

    def action_close(self) -> None:
        self.dismiss(None)
