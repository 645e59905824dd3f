"""Small dialogs of the stepper: leave or stay, a file name, overwrite or not, a script of
the session, unsaved work to restore, the KV check's report.

Each is a ModalScreen that answers through ``dismiss``: the stepper's callbacks act on the
answer, so nothing is lost while a dialog is open.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

import time

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from radixviz.tui.widgets.ordered_input import OrderedInput

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


TYPING_PAUSE_S = 0.6   # after the last key typed into a dialog, before its answer keys act again


class TypedNotAnswered:
    """For a dialog answered by one key (its bindings) whose answer drops or replaces work.

    A learner who types on without reading it (an operation begun before the dialog came up,
    ``insert "hello"``) must not answer it with a letter of a word (the l of ``hello``
    leaving without saving, the r of ``insert`` restoring), nor send the rest of the line to
    the screen behind. Any key that is not an answer means typing: it is kept from both,
    and the answer keys act only ``TYPING_PAUSE_S`` after the last key typed. Esc always."""

    _typing_until = 0.0

    def on_key(self, event: events.Key) -> None:
        dialog = cast("ModalScreen[Any]", self)
        answers = {key for binding in dialog.BINDINGS for key in cast(Binding, binding).key.split(",")}
        typing = time.monotonic() < self._typing_until
        if event.key == "escape" or (event.key in answers and not typing):
            return   # an answer: the bindings take it
        event.stop()
        event.prevent_default()
        self._typing_until = time.monotonic() + TYPING_PAUSE_S
        box = dialog.query_one("#dialog-box")
        if not box.query("#typed-note"):
            box.mount(Static(Text("\nThat was typed, not answered: first answer with one of the keys above.",
                                  style="bold"), id="typed-note"))


class ConfirmLeave(TypedNotAnswered, ModalScreen[str | None]):
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


class AskPath(ModalScreen):
    """One line of text, usually a file name: enter answers it, esc answers None.

    ``accept(text) -> (answer, error)``, when given, is asked first: an error is shown in
    the dialog at once (a missing file, say) and the dialog stays open to fix the name;
    otherwise the dialog answers ``answer``.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", hint: str = "",
                 accept: Callable[[str], tuple[Any, str | None]] | None = None, max_length: int = 0):
        super().__init__()
        self.title_text, self.value, self.hint, self.accept = title, value, hint, accept
        self.max_length = max_length

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-box") as box:
            box.border_title = self.title_text
            if self.hint:
                yield Static(Text(self.hint, style="dim"))
            yield OrderedInput(self.value, id="dialog-input", max_length=self.max_length)
            yield Static("", id="dialog-error")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        if self.accept is None:
            self.dismiss(text)
            return
        answer, error = self.accept(text)
        if error:
            # what went wrong may quote the name: plain text, never markup
            self.query_one("#dialog-error", Static).update(Text(f"✗ {error}"))
        else:
            self.dismiss(answer)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmOverwrite(TypedNotAnswered, ModalScreen[bool]):
    """A file is already there: True to replace it, False to choose another name."""

    BINDINGS = [Binding("y", "answer(True)", "Replace it"),
                Binding("n,escape", "answer(False)", "Another name")]

    def __init__(self, name: str):
        super().__init__()
        self.name_shown = name

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-box") as box:
            box.border_title = "Replace the file?"
            yield Static(Text(f"{self.name_shown} already exists.\n\n"
                              "y  replace it with this session\n"
                              "n  choose another name (esc too)"))

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class PickScript(ModalScreen[str | None]):
    """A script of this served session (saved or uploaded): its name, or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, names: list[str]):
        super().__init__()
        self.names = names

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-box") as box:
            box.border_title = "Open a script of this session"
            yield Static(Text("↑/↓ and enter open it; its operations run after the ones here · esc cancels",
                              style="dim"))
            yield OptionList(*[Option(Text(name), id=str(i)) for i, name in enumerate(self.names)],
                             id="dialog-scripts")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        assert event.option.id is not None   # each option was made with its index as its id
        self.dismiss(self.names[int(event.option.id)])

    def action_cancel(self) -> None:
        self.dismiss(None)


class RestoreWork(TypedNotAnswered, ModalScreen[str | None]):
    """A sandbox closed without saving: ``restore``, ``discard`` or None (decide later)."""

    BINDINGS = [Binding("r,enter", "answer('restore')", "Restore"),
                Binding("d", "answer('discard')", "Discard"),
                Binding("escape", "answer(None)", "Later")]

    def __init__(self, operations: int, when: str):
        super().__init__()
        self.operations, self.when = operations, when

    def compose(self) -> ComposeResult:
        count = f"{self.operations} operation{'s were' if self.operations != 1 else ' was'}"
        with Vertical(id="dialog-box") as box:
            box.border_title = "Unsaved work found"
            yield Static(Text(f"A sandbox closed on {self.when} before its {count} saved "
                              "(the terminal or the tab closed).\n\n"
                              "r  restore them here\n"
                              "d  discard them\n"
                              "esc  decide later (they are offered again next time)"))

    def action_answer(self, answer: str | None) -> None:
        self.dismiss(answer)


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
