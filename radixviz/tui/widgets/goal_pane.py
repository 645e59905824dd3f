"""The goal of a challenge, pinned above the stepper: each condition and whether it holds
now, the operations used against par, and the hints revealed so far."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.content import Content
from textual.widgets import Static

if TYPE_CHECKING:
    from typing import Any
    from radixviz.lessons.challenges.challenge import Challenge, Verdict


class GoalPane(Static):

    def __init__(self, challenge: Challenge, **kwargs: Any):
        super().__init__("", classes="pane", **kwargs)
        self.challenge = challenge
        # the title comes from a teacher's file: plain text, never markup
        self.border_title = Content(f"challenge: {challenge.title}  ({challenge.level}, par {challenge.par})")

    def show(self, verdict: Verdict | None, hints_shown: int, solution_seen: bool) -> None:
        """Draw ``verdict`` (None before the session is ready) and the revealed hints."""
        text = Text()
        statement = self.challenge.statement.replace("**", "").replace("`", "")
        text.append(statement.split("\n\n")[0].replace("\n", " ") + "\n")
        checks = verdict.checks if verdict is not None else ()
        for condition, check in zip(self.challenge.goal, checks or [None] * len(self.challenge.goal)):
            if check is None:
                text.append(f"  ○ {condition.words}\n", style="dim")
            elif check.held:
                text.append(f"  ✓ {condition.words}", style="green")
                text.append(f"  ({check.actual})\n", style="dim")
            else:
                text.append(f"  ✗ {condition.words}", style="bold")
                text.append(f"  ({check.actual})\n", style="dim")
        used = verdict.ops_used if verdict is not None else 0
        text.append(f"operations {used} · par {self.challenge.par} · "
                    f"allowed: {' '.join(self.challenge.allow)}", style="bold" if used else "")
        if solution_seen:
            text.append(" · solution seen", style="yellow")
        for number, hint in enumerate(self.challenge.hints[:hints_shown], start=1):
            text.append(f"\nhint {number}: {hint}", style="italic")
        self.update(text)
