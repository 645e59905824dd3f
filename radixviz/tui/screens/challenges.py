"""The list of challenges, with the learner's status, and the screens around one attempt."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from radixviz.lessons.progress import Progress

if TYPE_CHECKING:
    from collections.abc import Sequence
    from radixviz.lessons.challenges.challenge import Challenge
    from radixviz.lessons.progress import Progress
    from textual import getters

    from radixviz.tui.app_base import RadixvizAppBase


def status_text(challenge: Challenge, record: dict) -> str:
    """``✓ 2/2`` solved (operations/par), ``·`` solution seen, or the par still to reach."""
    if record.get("solved"):
        return f"✓ {record['ops']}/{challenge.par}"
    if record.get("seen_solution"):
        return "· seen"
    return f"  par {challenge.par}"



class ChallengeListScreen(Screen):
    if TYPE_CHECKING:   # for mypy: this screen runs in the radixviz app (Textual says App[Any])
        app = getters.app(RadixvizAppBase)
    BINDINGS = [Binding("escape,h", "home", "Home"), Binding("q", "quit_app", "Quit")]

    def __init__(self, challenges: Sequence[Challenge], progress: Progress):
        super().__init__()
        self.challenges, self.progress = challenges, progress

    def compose(self) -> ComposeResult:
        with Vertical(id="challenge-list-box") as box:
            box.border_title = "challenges"
            yield Static("Reach each goal by driving the cache; the engine judges the result. "
                         "Fewer operations is better: par is the fewest that solve it.", id="challenge-intro")
            yield OptionList(*self._options(), id="challenge-menu")
            yield Static("↑/↓ and enter to open · esc home", classes="hint")
        yield Footer()

    def _options(self) -> list:
        # a title comes from a teacher's file: plain text, never markup
        return [Option(Text(f"{c.number:>2}. {c.title}  [{c.level}]   "
                            f"{status_text(c, self.progress.challenges.get(c.id, {}))}"), id=c.id)
                for c in self.challenges]

    def refresh_status(self, progress: Progress) -> None:
        self.progress = progress
        menu = self.query_one(OptionList)
        highlighted = menu.highlighted
        menu.clear_options()
        menu.add_options(self._options())
        menu.highlighted = highlighted

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        challenge = next(c for c in self.challenges if c.id == event.option.id)
        self.app.open_challenge(challenge)

    def on_screen_resume(self) -> None:
        self.refresh_status(Progress.load())

    def action_home(self) -> None:
        self.app.pop_screen()

    def action_quit_app(self) -> None:
        self.app.action_quit()   # a sandbox below may hold unsaved work: it asks first


class SolvedScreen(ModalScreen[None]):
    """The goal is met: the learner's operations, against par, and the debrief."""

    BINDINGS = [Binding("escape,enter", "close", "Close")]

    def __init__(self, challenge: Challenge, ops: list[str], seen_solution: bool, debrief: str | None = None):
        super().__init__()
        self.challenge, self.ops, self.seen_solution = challenge, ops, seen_solution
        # the debrief filled in with what this run measured (Verdict.debrief)
        self.debrief = challenge.debrief if debrief is None else debrief

    def compose(self) -> ComposeResult:
        used, par = len(self.ops), self.challenge.par
        verdict = "at par!" if used == par else f"par is {par}" if used > par else "under par!"
        heading = f"# Solved in {used} operation{'s' * (used != 1)} ({verdict})"
        if self.seen_solution:
            heading += "\n\nYou saw the solution first, so this counts as seen, not solved."
        body = "\n".join([heading, "", "Your operations:", "", "```",
                          *self.ops, "```", "", self.debrief])
        with VerticalScroll(id="solved-box"):
            yield Markdown(body)
            yield Static("enter or esc: back to the sandbox (keep experimenting, or h for home)",
                         classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)


class SolutionScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter", "close", "Close")]

    def __init__(self, challenge: Challenge):
        super().__init__()
        self.challenge = challenge

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="solved-box"):
            yield Markdown("\n".join([f"# A solution in {self.challenge.par} operations", "", "```",
                                      self.challenge.solution, "```", "",
                                      "The challenge now counts as seen, not solved. Try it yourself: "
                                      "type these with : and watch each step."]))
            yield Static("enter or esc: back", classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)
