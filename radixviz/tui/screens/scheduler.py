"""The scheduler screen: run a workload through the first release's scheduler, then step
batch by batch through the queue, the running batch, the tree and the pool.

The form paints first; the simulation (torch, the engine, every batch recorded, no
micro-step tracing) runs in a worker thread and the panes are mounted when it is done.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Static

from radixviz.render.run_traffic import run_traffic_text
from radixviz.render.scheduler import status_text, summary_text
from radixviz.tui.from_thread import call_from_thread
from radixviz.tui.scheduler_model import BatchTimeline
from radixviz.tui.screens.help import SCHEDULER_GUIDE, HelpScreen
from radixviz.tui.widgets.scheduler_form import SchedulerForm, SimSettings

STEPPING = {"next", "prev", "first", "last", "next_round", "prev_round", "pool_grid",
            "scroll_tree"}

if TYPE_CHECKING:
    from textual import getters

    from radixviz.tui.app_base import RadixvizAppBase
    from radixviz.tui.widgets.scheduler_panes import SchedulerPanes


class SchedulerScreen(Screen):
    if TYPE_CHECKING:   # for mypy: this screen runs in the radixviz app (Textual says App[Any])
        app = getters.app(RadixvizAppBase)
    AUTO_FOCUS = None   # the stepping keys belong to the screen once a run is shown
    BINDINGS = [
        Binding("right,space,n", "next", "Next", tooltip="Next batch"),
        Binding("left,p", "prev", "Prev", tooltip="Previous batch"),
        Binding("home", "first", "First batch", show=False),
        Binding("end", "last", "Last batch", show=False),
        Binding("right_square_bracket", "next_round", "Next round", key_display="]",
                tooltip="Next admission round (skips decode passes)"),
        Binding("left_square_bracket", "prev_round", "Previous round", key_display="[",
                show=False),
        Binding("s", "settings", "Settings",
                tooltip="Settings: workload, policy, seed, requests, pool size; run again"),
        Binding("g", "pool_grid", "Pool: every slot / compact", show=False),
        Binding("pageup", "scroll_tree(-1)", "Scroll tree up", show=False),
        Binding("pagedown", "scroll_tree(1)", "Scroll tree down", show=False),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("escape,q", "back", "Back", key_display="q",
                tooltip="Back (closes the settings over a run, else leaves the screen)"),
    ]

    timeline: var[BatchTimeline | None] = var(None, bindings=True)
    """The BatchTimeline of the run shown, once one ran."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The stepping keys need a run on screen: before the first run, with the form over
        one, or while one is computed they are shown disabled and a key does nothing."""
        if action in STEPPING and (self.timeline is None or self.form_open or self.busy):
            return None
        return True

    def _panes(self) -> SchedulerPanes:
        """The run's panes (mounted with the first run)."""
        from radixviz.tui.widgets.scheduler_panes import SchedulerPanes   # Textual widgets, imported by the worker
        return self.query_one("#sched-panes", SchedulerPanes)

    @property
    def shown(self) -> BatchTimeline:
        """The run shown, for the stepping keys: a clear error if one acts before any run."""
        timeline = self.timeline
        if timeline is None:
            raise RuntimeError("no run to step through yet")
        return timeline

    busy = var(False, bindings=True)
    """A run is pending or computing: the loading line stands in for form and panes."""
    form_open = var(True, bindings=True)
    """The settings form is shown (else the run's panes)."""

    def __init__(self, settings: SimSettings | None = None, *, autorun: bool = False,
                 model: str = "fake", options: dict | None = None):
        """``autorun`` runs ``settings`` at once; ``model``/``options`` go to simulate()."""
        super().__init__()
        self.settings, self.autorun = settings or SimSettings(), autorun
        self.model_name, self.options = model, dict(options or {})
        self._run_id = 0

    def compose(self) -> ComposeResult:
        yield Static(Text(" scheduler: choose a workload and a policy"), id="sched-status")
        with Container(id="sched-body"):
            yield SchedulerForm(self.settings, self.options.get("engine"), self.options.get("engine_options"),
                                id="sched-form")
            yield Static("", id="sched-loading")
        yield Static("", id="sched-summary")
        yield Static("", id="sched-run")   # the whole run: % of optimal, TTFT p95
        yield Footer()

    def on_mount(self) -> None:
        self._show_part()
        if self.autorun:
            self._show_loading(self.settings)   # busy from now until the run is shown
            # the worker imports torch, which holds the GIL for a second: not before the
            # first paint
            self.app.after_first_paint(lambda: self._start(self.settings))
        else:
            self.query_one(SchedulerForm).focus_first()

    def watch_busy(self) -> None:
        self._show_part()

    def watch_form_open(self) -> None:
        self._show_part()

    def _show_part(self) -> None:
        """The loading line while busy, else the form or the panes."""
        self.query_one("#sched-loading").display = self.busy
        self.query_one(SchedulerForm).display = self.form_open and not self.busy
        for panes in self.query("#sched-panes"):
            panes.display = not (self.form_open or self.busy)

    # ---------------------------------------------------------------- running

    def on_scheduler_form_run(self, message: SchedulerForm.Run) -> None:
        message.stop()
        if message.engine_options:   # the engine's own fields (the form makes them from its options)
            self.options["engine_options"] = message.engine_options
        self._start(message.settings)

    def _start(self, settings: SimSettings) -> None:
        self._run_id += 1
        self._show_loading(settings)
        self._simulate(settings, self._run_id)

    def _show_loading(self, settings: SimSettings) -> None:
        self.query_one("#sched-loading", Static).update(Text(
            f"running {settings.requests} {settings.workload} requests under "
            f"{settings.policy} on {settings.pool_size} slots…"))
        self.busy = True

    @work(thread=True, exclusive=True, group="simulate")
    def _simulate(self, settings: SimSettings, run_id: int) -> None:
        # the simulation imports torch and the engine, and the panes their Textual widgets:
        # never on the UI thread
        from radixviz.tui.widgets import scheduler_panes  # noqa: F401
        from radixviz.sim.runner import simulate
        timeline: BatchTimeline | None = None
        error: str | None = None
        try:
            result = simulate(settings.workload, settings.policy, settings.requests,
                              settings.pool_size, settings.seed, model=self.model_name,
                              record=True, **self.options)
            timeline = BatchTimeline(result, settings.workload)
            if not len(timeline):
                reasons = {e.message for e in result.events if e.kind in ("refused", "stuck")}
                error = (f"no batch ran: all {result.stats.requests} requests were refused"
                         + (f" ({sorted(reasons)[0]})" if reasons else ""))
        except Exception as exc:  # noqa: BLE001 - a failed run is reported, the app goes on
            error = f"the simulation failed: {exc}"
        try:
            call_from_thread(self.app, self._ready, settings, timeline, error, run_id)
        except RuntimeError:
            pass   # the app closed while this ran: nobody to show it to

    async def _ready(self, settings: SimSettings, timeline: BatchTimeline | None, error: str | None,
                     run_id: int) -> None:
        if run_id != self._run_id or not self.is_mounted:
            return   # a newer run was started meanwhile, or the screen was left
        form = self.query_one(SchedulerForm)
        if error:
            self.form_open, self.busy = True, False
            form.show_error(error)
            form.focus_first()
            return
        if not self.query("#sched-panes"):
            # Textual: the panes' widgets, imported by the worker already (off the UI thread)
            from radixviz.tui.widgets.scheduler_panes import SchedulerPanes
            await self.query_one("#sched-body").mount(SchedulerPanes(id="sched-panes"))
        self.settings, self.timeline = settings, timeline
        self.busy = False
        self._show_panes()

    def _show_panes(self) -> None:
        self.form_open = False
        self.set_focus(None)
        # draw once the panes have their size (the pool map and wrapping depend on it)
        self.call_after_refresh(self.refresh_view)

    # ---------------------------------------------------------------- drawing

    def refresh_view(self) -> None:
        timeline = self.timeline
        if timeline is None or self.form_open or self.busy:
            return
        self._panes().show(timeline)
        self.query_one("#sched-status", Static).update(status_text(timeline))
        self.query_one("#sched-summary", Static).update(summary_text(timeline.totals()))
        result = timeline.result
        self.query_one("#sched-run", Static).update(
            run_traffic_text(result.settings["policy"], result.traffic))

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_view)

    def _moved(self, moved: bool) -> None:
        if moved:
            self.refresh_view()

    # ---------------------------------------------------------------- stepping

    def action_next(self) -> None:
        self._moved(self.shown.step(1))

    def action_prev(self) -> None:
        self._moved(self.shown.step(-1))

    def action_first(self) -> None:
        self._moved(self.shown.go(0))

    def action_last(self) -> None:
        self._moved(self.shown.go(len(self.shown) - 1))

    def action_next_round(self) -> None:
        self._moved(self.shown.next_round(1))

    def action_prev_round(self) -> None:
        self._moved(self.shown.next_round(-1))

    def action_pool_grid(self) -> None:
        panes = self._panes()
        panes.full_pool = not panes.full_pool

    def action_scroll_tree(self, direction: int) -> None:
        pane = self.query_one("#sched-tree")
        pane.scroll_relative(y=direction * max(1, pane.size.height - 2), animate=False)

    # ---------------------------------------------------------------- the rest

    def action_settings(self) -> None:
        self.form_open = True
        self.query_one(SchedulerForm).focus_first()

    def action_back(self) -> None:
        """Close the form over a run; otherwise leave the screen (or the app, if it is the
        only screen: ``radixviz simulate --app``)."""
        if self.form_open and self.timeline is not None and not self.busy:
            self.query_one(SchedulerForm).show_error(None)
            self._show_panes()
        elif len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.BINDINGS, guide=SCHEDULER_GUIDE))
