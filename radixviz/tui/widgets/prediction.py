"""A lesson's prediction, docked beside the tree it asks about (never over it).

Options are picked by their letter (a, b, c, as ``lessons --read`` takes them) or with
↑/↓ and enter; a free answer is typed, and the prompt says what form it takes. The screen
grades the reply: one it cannot read is refused here with the reason and asked again, so
a typo never counts as a wrong answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList, Static

from radixviz.lessons.grading import LETTERS, Chosen
from radixviz.tui.widgets.ordered_input import OrderedInput

if TYPE_CHECKING:
    from typing import Any
    from radixviz.lessons import Predict

MAX_CHOICES = 8


class Choices(OptionList, inherit_bindings=False):
    """The options, moved through with ↑/↓; ← and → stay the lesson's (back, and a
    reminder to answer) instead of scrolling the list sideways."""

    BINDINGS = OptionList.BINDINGS


class PredictionDock(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(LETTERS[i], f"pick({i})", f"option {LETTERS[i]}", show=False) for i in range(MAX_CHOICES)),
        Binding("escape", "skip", "Skip")]

    DEFAULT_CSS = """
    PredictionDock { height: auto; }
    PredictionDock > #predict-choices { height: auto; }
    PredictionDock > .hint { height: auto; }
    """

    @dataclass
    class Replied(Message):
        """The learner's reply: ``reply`` a typed str or a ``grading.Chosen``; ``said`` as
        it is shown back on the page."""
        reply: str | Chosen
        said: str

    class Skipped(Message):
        """The learner passed on the prediction (esc)."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.predict: Predict | None = None

    def compose(self):
        yield Static("", id="predict-question")
        yield Choices(id="predict-choices")
        yield OrderedInput(id="predict-answer")
        yield Static("", id="predict-hint", classes="hint")

    def ask(self, predict: Predict) -> None:
        """Put ``predict`` to the learner and take the keys (focus) for the reply."""
        self.predict = predict
        self.border_title = "predict, then watch"
        # text from a lesson file is never read as markup
        self.query_one("#predict-question", Static).update(Text(predict.question))
        choices = self.query_one("#predict-choices", OptionList)
        answer = self.query_one("#predict-answer", Input)
        choices.clear_options()
        choices.display = bool(predict.choices)
        answer.display = not predict.choices
        answer.disabled = bool(predict.choices)
        if predict.choices:
            choices.add_options([Text(f"{LETTERS[i]}) {c}") for i, c in enumerate(predict.choices)])
            choices.highlighted = 0
            letters = "/".join(LETTERS[:len(predict.choices)])
            self._hint(f"{letters} picks (or ↑/↓ and enter) · esc skips")
            choices.focus()
        else:
            answer.value = ""
            answer.placeholder = f"{predict.reply_form}, then enter"
            self._hint(f"type {predict.reply_form} · enter answers · esc skips")
            answer.focus()

    def check_action(self, action: str, parameters) -> bool | None:
        """A letter with no option behind it is not taken: it keeps its meaning (h: home)."""
        if action == "pick":
            return self.predict is not None and parameters[0] < len(self.predict.choices)
        return True

    def take_letter(self, character: str) -> bool:
        """Pick the option ``character`` names, wherever the focus is (a letter on screen
        beside a question is its answer); whether it named one."""
        if self.predict is None or character not in LETTERS[:len(self.predict.choices)]:
            return False
        self._chosen(LETTERS.index(character))
        return True

    def refuse(self, reason: str) -> None:
        """The reply could not be read: say why, keep the prediction open."""
        self._hint(f"✗ {reason}")

    def _hint(self, text: str) -> None:
        self.query_one("#predict-hint", Static).update(Text(text))

    def action_pick(self, index: int) -> None:
        if self.predict is not None and index < len(self.predict.choices):
            self._chosen(index)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._chosen(event.option_index)

    def _chosen(self, index: int) -> None:
        assert self.predict is not None   # the choices show only while a question is asked
        self.post_message(self.Replied(Chosen(index), f"{LETTERS[index]}) {self.predict.choices[index]}"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.post_message(self.Replied(event.value, event.value.strip()))

    def action_skip(self) -> None:
        self.post_message(self.Skipped())
