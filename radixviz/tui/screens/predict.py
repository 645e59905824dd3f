"""A lesson's prediction: answer before the operations run, then watch them."""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static


class PredictScreen(ModalScreen):
    """Dismisses with the grader's Verdict, or None when skipped.

    A picked option is graded by identity (``Chosen``); a typed reply that cannot be read
    keeps the dialog open with the reason, so a typo is not counted as a wrong answer.
    """

    BINDINGS = [Binding("escape", "skip", "Skip")]

    def __init__(self, ask):
        super().__init__()
        self.ask = ask

    def compose(self) -> ComposeResult:
        with Vertical(id="predict-box"):
            yield Static(Text(f"Predict: {self.ask.question}"), id="predict-question")
            if self.ask.choices:
                yield OptionList(*[Text(f"{chr(97 + i)}) {c}") for i, c in enumerate(self.ask.choices)],
                                 id="predict-choices")
                yield Static("↑/↓ and enter to answer · esc skips", classes="hint")
            else:
                yield Input(placeholder="your answer, then enter", id="predict-answer")
                yield Static("enter answers · esc skips", classes="hint", id="predict-hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        from radixviz.lessons.grading import Chosen
        event.stop()
        self._grade(Chosen(event.option_index))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self._grade(event.value)

    def _grade(self, reply) -> None:
        verdict = self.ask.block.grade(reply)
        if not verdict.understood:
            self.query_one("#predict-hint", Static).update(Text(f"✗ {verdict.reason}"))
            return
        if verdict.correct:
            self.app.notify("Right! Step on to watch it happen.", timeout=3)
        else:
            self.app.notify(f"Not quite ({verdict.reason}): step on and watch; the answer follows "
                            "the steps.", severity="warning", timeout=4)
        self.dismiss(verdict)

    def action_skip(self) -> None:
        self.dismiss(None)
