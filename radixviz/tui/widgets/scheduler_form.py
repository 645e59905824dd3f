"""The scheduler screen's settings form: workload, policy, seed, requests, pool size.

Keyboard first: tab/shift+tab between fields, enter runs. A bad value is refused on a
line under the form and every typed value stays where it was. No torch here.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static

from radixviz.sim.policies import POLICIES
from radixviz.sim.workloads import WORKLOADS

# Every batch of the run is kept (tree snapshot and pool counts), so the screen's limits
# are lower than the ``simulate`` command's: 500 requests on 8192 slots is about 0.5 GB.
LIMITS = {"seed": (0, 2**63 - 1), "requests": (1, 500), "pool_size": (16, 8192)}
LABELS = {"seed": "seed", "requests": "requests", "pool_size": "pool size"}


@dataclass(frozen=True)
class SimSettings:
    workload: str = "few-shot"
    policy: str = "lpm"
    seed: int = 0
    requests: int = 32
    pool_size: int = 1024


def check_settings(workload: str, policy: str, seed, requests, pool_size) -> tuple:
    """(SimSettings, None) or (None, one-line error). Numbers may come as text."""
    if workload not in WORKLOADS:
        return None, f"workload: choose from {', '.join(WORKLOADS)}"
    if policy not in POLICIES:
        return None, f"policy: choose from {', '.join(POLICIES)}"
    numbers = {}
    for name, raw in (("seed", seed), ("requests", requests), ("pool_size", pool_size)):
        low, high = LIMITS[name]
        try:
            value = int(str(raw).strip().replace("_", ""))
        except ValueError:
            return None, f"{LABELS[name]} must be a whole number, not {str(raw)!r}"
        if not low <= value <= high:
            return None, f"{LABELS[name]} must be between {low} and {high}, not {value}"
        numbers[name] = value
    return SimSettings(workload, policy, **numbers), None


class SchedulerForm(Vertical):
    """Posts ``SchedulerForm.Run`` with checked settings; shows refusals inline."""

    DEFAULT_CSS = """
    SchedulerForm { height: auto; max-width: 64; border: round $primary; padding: 0 1; }
    SchedulerForm Grid { grid-size: 2; grid-columns: 12 1fr; grid-rows: 1; grid-gutter: 1 1; height: auto; }
    SchedulerForm Label { width: 100%; text-align: right; }
    SchedulerForm #sched-form-error { color: $error; height: auto; margin-top: 1; }
    SchedulerForm #sched-run { margin-top: 1; }
    """

    class Run(Message):
        def __init__(self, settings: SimSettings):
            super().__init__()
            self.settings = settings

    def __init__(self, settings: SimSettings | None = None, **kwargs):
        super().__init__(**kwargs)
        self.initial = settings or SimSettings()

    def compose(self) -> ComposeResult:
        s = self.initial
        yield Static("Simulate the scheduler: tab moves, enter runs, esc goes back",
                     classes="hint")
        with Grid():
            yield Label("workload")
            yield Select([(w, w) for w in WORKLOADS], value=s.workload, allow_blank=False,
                         compact=True, id="sched-workload")
            yield Label("policy")
            yield Select([(p, p) for p in POLICIES], value=s.policy, allow_blank=False,
                         compact=True, id="sched-policy")
            for name in ("seed", "requests", "pool_size"):
                low, high = LIMITS[name]
                yield Label(LABELS[name])
                yield Input(str(getattr(s, name)), placeholder=f"{low}–{high}", compact=True,
                            id=f"sched-{name.replace('_', '-')}")
        yield Static("", id="sched-form-error")
        yield Button("Run", id="sched-run", compact=True, variant="primary")

    def on_mount(self) -> None:
        self.query_one("#sched-form-error").display = False

    def raw_values(self) -> dict:
        return {"workload": self.query_one("#sched-workload", Select).value,
                "policy": self.query_one("#sched-policy", Select).value,
                "seed": self.query_one("#sched-seed", Input).value,
                "requests": self.query_one("#sched-requests", Input).value,
                "pool_size": self.query_one("#sched-pool-size", Input).value}

    def submit(self) -> None:
        settings, error = check_settings(**self.raw_values())
        if error:
            self.show_error(error)
            return
        self.show_error(None)
        self.post_message(self.Run(settings))

    def show_error(self, message: str | None) -> None:
        error = self.query_one("#sched-form-error", Static)
        error.update(Text(f"✗ {message}") if message else "")
        error.display = bool(message)

    def focus_first(self) -> None:
        self.query_one("#sched-workload", Select).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.submit()
