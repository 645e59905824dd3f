"""The scheduler screen's settings form: workload, policy, seed, requests, pool size, and the
options of the engine the screen runs (a field each, made from its ``Option`` declarations:
a number in an input, a word or a switch a choice).

Keyboard first: tab/shift+tab between fields, ←/→ change a choice, enter runs from any
field. A bad value is refused on a line under the form and every typed value stays where
it was. No torch here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, Input, Label, Static

from radixviz.cache.engines import engine_spec
from radixviz.cache.options import EngineSettings
from radixviz.settings import APP_SIM_LIMITS, SimSettings, check_settings
from radixviz.sim.policies import POLICIES
from radixviz.sim.workloads import WORKLOADS

if TYPE_CHECKING:
    from typing import Any

    from radixviz.cache.options import Option

__all__ = ["Choice", "SchedulerForm", "SimSettings", "check_settings"]


def option_field_id(option: Option) -> str:
    """The id of an engine option's field: ``sched-option-page-size``."""
    return f"sched-option-{option.name.replace('_', '-')}"


class Choice(Static, can_focus=True):
    """One value of a fixed list: ←/→ (or space, or a click) cycle through them."""

    DEFAULT_CSS = """
    Choice { width: 1fr; height: 1; }
    Choice:focus { background: $accent 30%; text-style: bold; }
    """
    BINDINGS = [Binding("left", "cycle(-1)", "Previous choice", show=False),
                Binding("right,space", "cycle(1)", "Next choice", show=False)]
    value = reactive("")

    def __init__(self, choices, value: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.choices = tuple(choices)
        self.value = value if value in self.choices else self.choices[0]

    def render(self) -> Text:
        where = f"{self.choices.index(self.value) + 1}/{len(self.choices)}"
        return Text.assemble("◀ ", (self.value, "bold"), " ▶  ", (where, "dim"))

    def action_cycle(self, step: int) -> None:
        index = self.choices.index(self.value)
        self.value = self.choices[(index + step) % len(self.choices)]

    def on_click(self) -> None:
        self.action_cycle(1)


class SchedulerForm(Vertical):
    """Posts ``SchedulerForm.Run`` with checked settings; shows refusals inline."""

    DEFAULT_CSS = """
    SchedulerForm { height: auto; max-width: 64; border: round $primary; padding: 0 1; }
    SchedulerForm Grid {
        grid-size: 2; grid-columns: 12 1fr; grid-rows: 1; grid-gutter: 1 1; height: auto;
    }
    SchedulerForm Label { width: 100%; text-align: right; }
    SchedulerForm #sched-form-error { color: $error; height: auto; margin-top: 1; }
    SchedulerForm #sched-run { margin-top: 1; }
    """

    BINDINGS = [Binding("enter", "submit", "Run", show=False)]   # from a Choice; Input and
    # Button handle enter themselves and end up in submit() too

    class Run(Message):
        def __init__(self, settings: SimSettings, engine_options: EngineSettings | None = None):
            super().__init__()
            self.settings, self.engine_options = settings, engine_options

    def __init__(self, settings: SimSettings | None = None, engine: str | None = None,
                 engine_options: dict | None = None, **kwargs: Any):
        """``engine``: the engine the screen runs (None: the loop's own, no fields of its
        own); its options that ``simulate`` offers get a field each, ``engine_options``
        their first values (else the declared defaults)."""
        super().__init__(**kwargs)
        self.initial = settings or SimSettings()
        self.engine = engine
        self.engine_fields = () if engine is None else tuple(
            o for o in engine_spec(engine).options if "simulate" in o.commands and o.flag_name and not o.many)
        self.initial_options = {o.name: (engine_options or {}).get(o.name, o.default) for o in self.engine_fields}

    def compose(self) -> ComposeResult:
        s = self.initial
        yield Static("Simulate the scheduler. tab: next field · ←/→: change a choice · "
                     "enter: run · esc: back", classes="hint")
        with Grid():
            yield Label("workload")
            yield Choice(WORKLOADS, s.workload, id="sched-workload")
            yield Label("policy")
            yield Choice(POLICIES, s.policy, id="sched-policy")
            for name, limit in APP_SIM_LIMITS.items():
                yield Label(limit.label)
                yield Input(str(getattr(s, name)), placeholder=f"{limit.low}–{limit.high}", compact=True,
                            id=f"sched-{name.replace('_', '-')}")
            for option in self.engine_fields:
                yield Label(option.name.replace("_", " "))
                yield self._option_field(option, self.initial_options[option.name])
        yield Static("", id="sched-form-error")
        yield Button("Run", id="sched-run", compact=True, variant="primary")

    def _option_field(self, option, value):
        field_id = option_field_id(option)
        if option.limit is not None:
            return Input("" if value is None else str(value), placeholder=f"{option.limit.low}–{option.limit.high}",
                         compact=True, id=field_id, tooltip=option.help)
        words = option.choices or ("on", "off")
        shown = value if option.choices else ("on" if value else "off")
        choice = Choice(words, shown, id=field_id)
        choice.tooltip = option.help   # Static takes no tooltip argument; the attribute is Widget's
        return choice

    def on_mount(self) -> None:
        self.query_one("#sched-form-error").display = False

    def raw_values(self) -> dict:
        return {"workload": self.query_one("#sched-workload", Choice).value,
                "policy": self.query_one("#sched-policy", Choice).value,
                "seed": self.query_one("#sched-seed", Input).value,
                "requests": self.query_one("#sched-requests", Input).value,
                "pool_size": self.query_one("#sched-pool-size", Input).value}

    def action_submit(self) -> None:
        self.submit()

    def engine_values(self) -> tuple[dict, str | None]:
        """(the engine's options as typed, parsed by each option; the first refusal or None)."""
        values: dict[str, Any] = {}
        for option in self.engine_fields:
            field = self.query_one(f"#{option_field_id(option)}")
            typed = field.value if isinstance(field, (Input, Choice)) else ""
            if not typed.strip() and option.default is None:
                values[option.name] = None   # left empty: the engine's own choice (host size: 2x the pool)
                continue
            try:
                values[option.name] = option.parse(typed)
            except ValueError as exc:
                return values, str(exc)
        return values, None

    def submit(self) -> None:
        settings, error = check_settings(**self.raw_values())
        options, option_error = self.engine_values()
        caps = getattr(self.app, "caps", None)      # a served session: its memory budget bounds the run
        if caps is not None and settings is not None and not option_error:
            option_error = caps.sim_refusal(settings.requests, settings.pool_size, options.get("host_size"))
        if error or option_error:
            self.show_error(error or option_error)
            return
        engine = None
        if self.engine is not None and settings is not None:
            try:   # the engine's settings object: made and checked here, once, and run whole
                engine = engine_spec(self.engine).settings_type(settings.pool_size, **options)
            except ValueError as exc:
                self.show_error(str(exc))
                return
        self.show_error(None)
        self.post_message(self.Run(settings, engine))

    def show_error(self, message: str | None) -> None:
        error = self.query_one("#sched-form-error", Static)
        error.update(Text(f"✗ {message}") if message else "")
        error.display = bool(message)

    def focus_first(self) -> None:
        self.query_one("#sched-workload", Choice).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.submit()
