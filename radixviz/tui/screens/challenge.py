"""One challenge in the stepper: the goal pinned above the panes and judged live by the
engine after every operation, hints one at a time, the solution on request."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input

from radixviz.lessons.challenges.challenge import AttemptError, check_op_allowed, judge
from radixviz.lessons.progress import update_progress
from radixviz.script import Op, ScriptError, parse_script
from radixviz.tui.screens.challenges import SolutionScreen, SolvedScreen
from radixviz.tui.screens.stepper import StepperScreen
from radixviz.tui.screens.stepper_keys import STEPPER_KEYS
from radixviz.tui.widgets.goal_pane import GoalPane

if TYPE_CHECKING:
    from radixviz.lessons.challenges.challenge import Challenge, Verdict
    from radixviz.lessons.progress import Progress
    from radixviz.script.session import Session

# ? reveals the next hint here; help stays on f1
CHALLENGE_ONLY = [
    Binding("question_mark", "hint", "Hint", key_display="?", tooltip="reveal the next hint"),
    Binding("g", "solution", "Solution",
            tooltip="show a solution (the challenge then counts as seen, not solved)"),
    Binding("f1", "help", "Help", tooltip="this help", show=False),
]
# a challenge is opened from the challenge list, and h goes back there (the one screen below)
BACK_TO_LIST = Binding("h", "home", "Challenges", tooltip="back to the challenge list")
# hint and solution take help's place, ahead of the lesser keys a narrow footer leaves out
CHALLENGE_KEYS: list[BindingType] = [key for b in STEPPER_KEYS
                  for key in (CHALLENGE_ONLY if b.action == "help"
                              else [BACK_TO_LIST] if b.action == "home" else [b])]


class ChallengeScreen(StepperScreen):
    ASK_BEFORE_LEAVING = False   # progress keeps what counts: solved or not, solution seen
    BINDINGS = CHALLENGE_KEYS
    WITHOUT_ENGINE = StepperScreen.WITHOUT_ENGINE | {"hint", "solution"}

    def __init__(self, challenge: Challenge, load: Callable[[], tuple[Session, str | None]],
                 export_dir: Path | None = None):
        """``load()`` builds the session with the challenge's start already played."""
        super().__init__(load, title=f"challenge: {challenge.title}", export_dir=export_dir)
        self.challenge = challenge
        self.start_ops = 0
        self.hints_shown = 0
        self.solution_seen = False
        self.solved = False
        self.verdict: Verdict | None = None
        self._judged_at = -1          # how many records the verdict was computed on

    def compose(self) -> ComposeResult:
        yield GoalPane(self.challenge, id="goal-pane")
        yield from super().compose()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#goal-pane", GoalPane).show(None, 0, False)

    async def _ready(self, session: Session, error: str | None) -> None:
        self.start_ops = len(session.records)
        await super()._ready(session, error)
        if self.model is not None and self.model.frames:
            self.position = len(self.model.frames) - 1   # open on the starting tree, not its first step

    # ------------------------------------------------------------ the goal, live

    def refresh_view(self) -> None:
        super().refresh_view()
        if self.model is None or not self.is_attached:
            return
        records = len(self.model.session.records)
        if records != self._judged_at:
            self.verdict = verdict = judge(self.challenge, self.model.session, self.start_ops)
            self._judged_at = records
            if verdict.solved and not self.solved and verdict.ops_used:
                self._on_solved(verdict)
        self.query_one("#goal-pane", GoalPane).show(self.verdict, self.hints_shown, self.solution_seen)

    def _on_solved(self, verdict: Verdict) -> None:
        self.solved = True
        self._hide_input()   # solved: back to stepping through what the learner did
        ops = [r.op.text for r in self.loaded.session.records[self.start_ops:]]
        if not self.solution_seen:
            self._save(lambda p: p.solve_challenge(self.challenge.id, len(ops)))
        self.app.push_screen(SolvedScreen(self.challenge, ops, self.solution_seen,
                                          verdict.debrief(self.challenge)))

    def _save(self, change: Callable[[Progress], object]) -> None:
        _, warnings = update_progress(change)
        if warnings:
            self.notify(warnings[-1], markup=False, severity="warning", timeout=6)

    # ----------------------------------------------------- only allowed operations

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Refuse an operation the challenge does not allow, keeping the typed line; the
        stepper's own handler (called next by Textual, up the class tree) runs the rest."""
        if self.model is None:
            return
        try:
            ops = parse_script(event.value, "<input>")
        except ScriptError:
            return              # the stepper reports the bad line itself
        refused = self._refused(ops)
        if refused:
            event.stop()
            event.prevent_default()
            self._show_error(refused)

    def _refused(self, ops: Iterable[Op]) -> str | None:
        for op in ops:
            try:
                check_op_allowed(self.challenge, op)
            except AttemptError:
                return (f"{op.name!r} is not allowed in this challenge "
                        f"(allowed: {', '.join(self.challenge.allow)})")
        return None

    def _node_action(self, choice: tuple[str, int] | None) -> None:
        if choice and self.model is not None:
            refused = self._refused([Op(choice[0])])
            if refused:
                self._show_error(refused)
                return
        super()._node_action(choice)

    def action_toggle_matcher(self) -> None:
        refused = self._refused([Op("matcher")])
        if refused:
            self.notify("the matcher stays fixed in this challenge: radixviz compares both for you",
                        timeout=4)
            return
        super().action_toggle_matcher()

    # ------------------------------------------------------------ hints, solution

    def action_hint(self) -> None:
        if self.hints_shown < len(self.challenge.hints):
            self.hints_shown += 1
        else:
            self.notify("no more hints: press g to see a solution", timeout=4)
        self.refresh_view() if self.model is not None else \
            self.query_one("#goal-pane", GoalPane).show(None, self.hints_shown, self.solution_seen)

    def action_solution(self) -> None:
        if not self.solved:
            self.solution_seen = True
            self._save(lambda p: p.see_solution(self.challenge.id))
        self.app.push_screen(SolutionScreen(self.challenge))
        if self.model is not None:
            self.refresh_view()
