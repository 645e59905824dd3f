"""The stepper: tree, pool, code and narration of one micro-step at a time.

The sandbox is this screen; a lesson (``lesson.py``), a challenge (``challenge.py``) and a
sandbox opened from another screen (``side_sandbox.py``) are kinds of it. The engine (and
torch) loads in a worker thread; the screen paints a loading line first, then the panes,
empty, while torch loads (the sandbox's and a challenge's), and draws the session into them
when it is ready.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Container
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static

from radixviz.cache.engines import op_owners
from radixviz.tui.from_thread import call_from_thread
from radixviz.tui.kv_check import verify_session
from radixviz.tui.screens.compare import CompareScreen, engine_columns
from radixviz.tui.screens.dialogs import KVReport
from radixviz.tui.screens.early_keys import EarlyKeys, bound_action, to_open_input
from radixviz.tui.screens.help import HelpScreen
from radixviz.tui.screens.node_picker import NodePicker
from radixviz.tui.screens.stepper_files import SandboxFiles
from radixviz.tui.screens.stepper_keys import STEPPER_KEYS
from radixviz.tui.sparse_compositor import paint_sparsely
from radixviz.tui.stepper_model import StepperModel
from radixviz.tui.widgets.footer import FittingFooter
from radixviz.tui.widgets.ordered_input import OrderedInput

if TYPE_CHECKING:
    from radixviz.script.session import Session
    from radixviz.tui.stepper_model import Applied

SPEEDS = (2.0, 1.0, 0.5, 0.25, 0.1, 0.05)   # seconds per step in autoplay
PREFETCH_AFTER = 0.002   # s after a step's frame is painted: a key already waiting goes first
NO_MATCHER = ("the {} engine has no #7 matcher switch: the matcher bug was fixed in "
              "January 2024; nothing changed")


class StepperScreen(SandboxFiles, Screen):
    AUTO_FOCUS = None   # keys step the frames until : opens the operation input
    ASK_BEFORE_LEAVING = True   # a sandbox's operations are the learner's work
    BINDINGS = [*STEPPER_KEYS]   # a copy typed as Screen.BINDINGS (list is invariant)
    # what the keys can do before the engine has loaded: everything else waits for it
    WITHOUT_ENGINE = frozenset({"help", "home", "quit_app", "close_input", "scroll_tree",
                                "scroll_text", "scroll_pane"})
    SCROLLED_FIRST = "#tree-pane"   # what ↑ ↓ pgup pgdn scroll while tab has picked no pane
    # the panes can show themselves empty while torch loads (StepperPanes.show_loading)
    PANES_BEFORE_ENGINE = True

    class Loaded(Message):
        """The engine has loaded this stepper's session: its history exists, the keys act."""

    class PanesLoaded(Message):
        """The panes' modules are imported (in the loading worker): they can be shown empty."""

    model: var[StepperModel | None] = var(None, bindings=True)
    """The StepperModel once the engine has loaded its session; None while it loads."""

    @property
    def loaded(self) -> StepperModel:
        """The model, where the engine must have loaded: in the actions ``check_action``
        keeps disabled until then, and in what they call."""
        model = self.model
        if model is None:
            raise RuntimeError("the engine is still loading this session")
        return model

    playing = var(False, init=False)
    """Autoplay is on: a timer steps forward every ``SPEEDS[speed]`` seconds."""
    speed = var(1, init=False, always_update=True)
    """Index into SPEEDS (0 is the slowest); pressing past either end says where it stopped."""
    position = var(0, init=False)
    """The frame shown, an index into the session's frames (kept within them). Moving it
    repaints the panes; the model keeps it too, for a replay that stays on the same step."""

    def __init__(self, load: Callable[[], tuple[Session, str | None]], title: str = "sandbox",
                 export_dir: Path | None = None):
        """``load()`` runs in a worker: returns (Session, error line or None)."""
        super().__init__()
        paint_sparsely(self)   # a step repaints a few rows of each pane, not the whole screen
        self._load_session, self.stepper_title = load, title
        self.export_dir = Path(export_dir or "radixviz-export")
        self._autoplay: Timer | None = None   # while playing
        self._prefetch: Timer | None = None   # the next step's rows, built once this one has painted
        self._early_keys = EarlyKeys()   # keys pressed while the engine loads
        self._mounting = asyncio.Lock()   # the panes are mounted once, early or when ready
        self._engine_shown: str | None = None   # the engine whose keys the footer lists

    def compose(self) -> ComposeResult:
        # the title may be a script's path: plain text, never markup
        yield Container(Static(Text(f"{self.stepper_title}: loading the engine (torch)…"), id="loading"),
                        id="stepper-body")
        yield Static("", id="op-error")
        caps = self.app.caps   # a served session: a typed line has a length limit
        yield OrderedInput(placeholder='operation, e.g. insert "Hello"   (enter runs it and stays open; '
                                'esc closes)', id="op-input", max_length=caps.line_chars if caps else 0,
                    # letters typed in one burst with ":" are in the field before its focus
                    # event: selecting them then would let the next letter replace them
                    select_on_focus=False)
        yield FittingFooter()

    def on_mount(self) -> None:
        self._hide_input()
        # start loading once the placeholder is on screen, so the first paint is not delayed
        self.app.after_first_paint(self._load)

    @work(thread=True, exclusive=True, group="load")
    def _load(self) -> None:
        # the panes' Textual widgets and renderers load here, off the UI thread, so the
        # loading line paints first; the panes are shown empty (they need no torch) while
        # the engine loads, and keys typed meanwhile wait for it (early_keys)
        from radixviz.tui.widgets import panes  # noqa: F401
        # not waited for: torch starts loading while the panes are mounted and painted
        self.post_message(self.PanesLoaded())
        session, error = self._load_session()
        if session is not None:   # the code pane's views, before the first steps need them
            from radixviz.tui.widgets.code_pane import code_theme, warm_functions  # textual widgets: as the panes above
            warm_functions(session.frames, code_theme(self.app), self.app.call_from_thread(self._code_view_size))
        call_from_thread(self.app, self._ready, session, error)

    def _code_view_size(self) -> tuple[int, int | None] | None:
        """The code pane's view size if the panes are already up (the sandbox's are, while
        the engine loads), for the loading worker to build the first steps' views in."""
        from radixviz.tui.widgets.code_pane import CodePane   # textual widgets: loaded with the panes
        panes = self.query(CodePane)
        return panes.first().view_size() if panes else None

    async def on_stepper_screen_panes_loaded(self, event: PanesLoaded) -> None:
        await self._mount_panes(early=True)

    async def _mount_panes(self, early: bool = False) -> bool:
        """Put the panes in place of the loading line (once); ``early``: only panes that can
        show themselves without a session (``show_loading``). Whether they are mounted."""
        async with self._mounting:   # the early mount and the engine's may meet
            if not self.is_attached:
                return False
            if self.query("#stepper-panes"):
                return True
            if early and self.model is not None:
                return False
            if early and not self.PANES_BEFORE_ENGINE:
                return False   # a lesson's panes: the loading line stays until the engine is there
            panes = self.make_panes()
            body = self.query_one("#stepper-body")
            await body.remove_children()
            await body.mount(panes)
            if early and self.is_attached and self.model is None:
                self.show_before_engine(panes)
            return self.is_attached

    def show_before_engine(self, panes: Widget) -> None:
        """Draw what the panes can show while the engine still loads (mounted early)."""
        from radixviz.tui.widgets.panes import StepperPanes   # Textual widgets, imported by make_panes
        if isinstance(panes, StepperPanes):
            panes.show_loading(self.app.pool_size, f"{self.stepper_title}: loading the engine (torch)…")

    def make_panes(self) -> Widget:
        """The panes this screen draws its frames into (called once the engine has loaded)."""
        from radixviz.tui.widgets.panes import StepperPanes   # Textual widgets: once the engine is ready
        return StepperPanes(id="stepper-panes")

    async def _ready(self, session: Session, error: str | None) -> None:
        if not self.is_attached:      # the learner left before the engine was ready
            return
        if not await self._mount_panes():
            return
        if error:
            self._show_error(error)
        self.model = StepperModel(session, caps=self.app.caps)   # only now do the keys act
        self.start_work(session)   # what a file or the caller gave: nothing to lose yet
        self.post_message(self.Loaded())
        if self._early_keys.held:   # then the keys pressed meanwhile, in order
            self.run_worker(self._early_keys.release(self.app), group="early-keys")

    def watch_model(self, model: StepperModel | None) -> None:
        if model is not None:
            self.model_changed()

    def validate_position(self, index: int) -> int:
        """Within the frames kept: older ones may have been dropped for memory."""
        if self.model is None or not self.model.frames:
            return 0
        frames = self.model.frames
        return max(frames.first, min(index, len(frames) - 1))

    def watch_position(self, index: int) -> None:
        if self.model is not None:
            self.model.go(index)
            self.refresh_view()

    def on_key(self, event: events.Key) -> None:
        """Keys in the order pressed: held while the engine loads; those after ``:`` typed
        into the input even when they came in one burst with it (see early_keys)."""
        if to_open_input(self.query_one("#op-input", Input), event):
            return
        if self.model is None:
            self._early_keys.hold_until_ready(self, event, self.WITHOUT_ENGINE)
        elif bound_action(self, event.key) == "op_input":
            # opened here, not by the binding: that runs only after the keys queued behind
            event.stop()
            event.prevent_default()
            self.action_op_input()

    def model_changed(self) -> None:
        """The model changed more than the position (an operation, an undo, a replay; a
        lesson's next stop): take the model's position without its own repaint, and
        repaint once."""
        self.set_reactive(StepperScreen.position, self.loaded.position)
        engine = self.loaded.session.engine.name
        if engine != self._engine_shown:   # an engine line: its keys (b) may be other ones
            self._engine_shown = engine
            self.refresh_bindings()
        self.refresh_view()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Before the engine has loaded, the keys that need it are shown disabled; b is the
        bug switch of the engine shown (the #7 matcher, or the host tier's 9fbe6800a bugs)."""
        if action in ("toggle_matcher", "toggle_head_bugs"):
            if self.model is None:
                return None if action == "toggle_matcher" else False
            return (action == "toggle_head_bugs") == self._has_head_bugs()
        if self.model is None and action not in self.WITHOUT_ENGINE:
            return None
        return True

    def _has_head_bugs(self) -> bool:
        return self.loaded.session.spec.takes("head_bugs")

    # ---------------------------------------------------------------- drawing

    def status_notes(self) -> list[tuple[str, str]]:
        """(long, short) notes for the end of the status line: where the learner is."""
        notes = []
        if self.playing:
            notes.append((f"▶ autoplay {SPEEDS[self.speed]}s", f"▶ {SPEEDS[self.speed]:g}s"))
        if self.model is not None and self.model.at_oldest_kept:
            notes.append(self.model.dropped_note())   # older steps were dropped for memory
        return notes

    def refresh_view(self) -> None:
        if self.model is None or not self.is_attached:
            return
        try:
            from radixviz.tui.widgets.panes import StepperPanes   # Textual widgets, loaded by make_panes
            panes = self.query_one("#stepper-panes", StepperPanes)
            panes.show(self.model, self.status_notes())
        except NoMatches:
            return  # the screen is being closed and its panes are already gone
        self.call_after_refresh(self._prefetch_next)

    def _prefetch_next(self) -> None:
        """Once this step has painted, build the next step's rows (``StepperPanes.prefetch``):
        a held → or autoplay leaves tens of ms between steps, and a step that finds its rows
        built paints in much less time. On a short timer, so that a key already waiting is
        handled first; a step that comes before it cancels it."""
        if self._prefetch is not None:
            self._prefetch.stop()
        self._prefetch = self.set_timer(PREFETCH_AFTER, self._prefetch_now)

    def _prefetch_now(self) -> None:
        self._prefetch = None
        model = self.model
        if model is None or model.at_end or not self.is_attached:
            return
        from radixviz.tui.widgets.panes import StepperPanes   # Textual widgets, loaded by make_panes
        panes = next(iter(self.query("#stepper-panes").results(StepperPanes)), None)
        if panes is None:
            return   # closing, or a screen with panes of its own kind
        frame = model.frames[model.position + 1]
        panes.prefetch(frame, model.record_of(frame))

    def _show_error(self, message: str) -> None:
        error = self.query_one("#op-error", Static)
        error.update(Text(f"✗ {message}"))   # may quote what was typed: never markup
        error.display = True

    # ----------------------------------------------------------------- stepping

    def action_next(self) -> None:
        self.position += 1

    def action_prev(self) -> None:
        self._move_back(self.position - 1)

    def action_first(self) -> None:
        self._move_back(0)

    def action_last(self) -> None:
        self.position = len(self.loaded.frames) - 1

    def action_next_op(self) -> None:
        self.position = self.loaded.next_op_start()

    def action_prev_op(self) -> None:
        self._move_back(self.loaded.prev_op_start())

    def _move_back(self, index: int) -> None:
        """Stepping back stops at the oldest frame kept: pressing on there says why."""
        before = self.position
        self.position = index
        if self.position == before and self.loaded.at_oldest_kept:
            self.notify(f"{self.loaded.dropped_note()[0][2:]}: this is the oldest step kept "
                        "(start with --history-mb to keep more)", title="No earlier steps")

    # ----------------------------------------------------------------- autoplay

    def action_autoplay(self) -> None:
        self.playing = not self.playing

    def action_faster(self) -> None:
        self.speed += 1

    def action_slower(self) -> None:
        self.speed -= 1

    def validate_speed(self, speed: int) -> int:
        return max(0, min(len(SPEEDS) - 1, speed))

    def watch_playing(self, playing: bool) -> None:
        self._restart_autoplay()
        self.refresh_view()

    def watch_speed(self, speed: int) -> None:
        self._restart_autoplay()
        self.notify(f"autoplay: one step every {SPEEDS[speed]} s", timeout=2)
        self.refresh_view()

    def _restart_autoplay(self) -> None:
        if self._autoplay is not None:
            self._autoplay.stop()
            self._autoplay = None
        if self.playing:
            self._autoplay = self.set_interval(SPEEDS[self.speed], self._tick)

    def _tick(self) -> None:
        if self.app.screen is not self:
            return  # a dialog (help, a prediction, the palette) is open: wait for it
        if self.loaded.at_end:
            self.playing = False   # stop at the end
        else:
            self.action_next()

    def action_scroll_tree(self, direction: int) -> None:
        for pane in self.query("TreePane"):
            pane.scroll_relative(y=direction * max(1, pane.size.height - 2), animate=False)

    def action_scroll_pane(self, direction: int, page: bool = False) -> None:
        """Scroll the pane tab picked (else ``SCROLLED_FIRST``) a line, or a page less a line."""
        pane = self.focused if self.focused is not None and self.focused.has_class("pane") else None
        if pane is None:
            found = self.query(self.SCROLLED_FIRST)
            if not found:
                return
            pane = found.first()
        rows = max(1, pane.scrollable_content_region.height - 1) if page else 1
        scroll = getattr(pane, "scroll_rows", None)
        if scroll is not None:
            scroll(direction * rows)

    def action_scroll_text(self, direction: int) -> None:
        for pane in self.query("NarrationPane"):
            pane.scroll_relative(y=direction * 3, animate=False)

    def action_toggle_trace(self) -> None:
        """The code pane's tracing lines (``if tr.active: ...``): shown dimmed, or hidden."""
        from radixviz.tui.widgets.code_pane import CodePane   # Textual widgets, loaded with the panes
        shown = False
        for pane in self.query(CodePane):
            shown = pane.toggle_trace()
        self.notify("tracing lines shown, dimmed (t hides them)" if shown
                    else "tracing lines hidden: the code as SGLang has it (t shows them)", timeout=3)

    # -------------------------------------------------------------- operations

    def action_op_input(self) -> None:
        field = self.query_one("#op-input", Input)
        field.display, field.disabled = True, False
        # at once, not after the keys already queued (Widget.focus waits its turn): letters
        # typed or pasted right after ":" are the operation's, never stepper keys
        self.set_focus(field)

    def action_close_input(self) -> None:
        self._hide_input()
        self.query_one("#op-error").display = False

    def _hide_input(self) -> None:
        # hidden and disabled, so it can never hold the focus the stepping keys need
        field = self.query_one("#op-input", Input)
        field.display, field.disabled = False, True
        self.set_focus(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._applied(self.loaded.apply_text(event.value), event.input)

    def _applied(self, applied: Applied, field: Input | None = None) -> None:
        """Show what an operation did; on error keep the typed text so nothing is lost."""
        if applied.error:
            self._show_error(applied.error)
        else:
            self.query_one("#op-error").display = False
            if field is not None:
                # the field stays open for the next operation: letters typed next must not
                # act as keys (h from "matcher" used to go home); esc closes it
                field.value = ""
        self.work_changed()
        self.model_changed()

    def action_toggle_head_bugs(self) -> None:
        if self.model is not None and self._has_head_bugs():
            self._toggle_head_bugs()

    def action_toggle_matcher(self) -> None:
        if self.model is None:
            return
        spec = self.model.session.spec
        if spec.takes("head_bugs"):   # b is the engine's bug switch, whichever it declares
            self._toggle_head_bugs()
            return
        if not spec.takes("buggy"):
            self.notify(NO_MATCHER.format(self.model.session.engine.name), timeout=5)
            return
        applied = self.model.toggle_matcher()
        self._applied(applied)
        if applied.error is None:
            matcher = "BUGGY (before #7)" if self.model.session.initial_buggy else "fixed (#7)"
            count = len(self.model.session.records)
            self.notify(f"replayed {count} operation(s) from the start with the {matcher} matcher; "
                        "same operation shown", timeout=4)

    def _toggle_head_bugs(self) -> None:
        """``b`` on the host-tier engine: SGLang's two 9fbe6800a write_back bugs back, or
        fixed again, as one operation (``hicache-fixes off|on``) from this point on."""
        on = bool(self.loaded.session.engine.settings.get("head_bugs"))
        applied = self.loaded.apply_text("hicache-fixes on" if on else "hicache-fixes off")
        self._applied(applied)
        if applied.error is None:
            self.notify("host-tier fixes on: radixviz's lines" if on else
                        "SGLang's 9fbe6800a write_back bugs are back (hicache-fixes off)", timeout=4)

    def action_compare(self, kind: str = "matchers") -> None:
        """The compare view on this session's operations, at the operation shown: the two
        matchers (#7), or ``engines``: the 2024 and the 2026 engine (across time)."""
        session = self.loaded.session
        if not session.records:
            self.notify("nothing to compare yet: run an operation first (press :)", severity="warning")
            return
        record = self.loaded.record
        self.playing = False
        if kind == "matchers" and session.initial["engine"] not in op_owners("matcher"):
            kind = "engines"   # the two matchers are the 2024 engine's: compare across time instead
            self.notify("the matchers belong to the 2024 engine: comparing it with this 2026 cache", timeout=4)
        columns = engine_columns(session) if kind == "engines" else None
        self.app.push_screen(CompareScreen(session.ops, session.pool_size, session.device,
                                           at=record.index if record is not None else None, columns=columns))

    def action_undo(self) -> None:
        if self.model is not None:
            self._report(self.model.undo(), "undone: the last operation is taken back (redo: ctrl+y)")

    def action_redo(self) -> None:
        if self.model is not None:
            self._report(self.model.redo(), "redone")

    def _report(self, applied: Applied, done: str) -> None:
        if applied.error:
            self.notify(applied.error, severity="warning", timeout=3)
        else:
            self.query_one("#op-error").display = False
            self.notify(done, timeout=2)
        self.work_changed()
        self.model_changed()

    def action_select_node(self) -> None:
        # before any step the picker still opens, to say there is nothing to pick yet
        frame = self.loaded.frame or self.loaded.session.live_frame()
        self.app.push_screen(NodePicker(frame, self.loaded.session.locks), self._node_action)

    def _node_action(self, choice: tuple[str, int] | None) -> None:
        if choice:
            action, node_id = choice
            self._applied(self.loaded.node_op(action, node_id))

    # --------------------------------------------------------------- KV check

    def action_kv_events(self) -> None:
        from radixviz.tui.screens.kv_events import KVEventsScreen   # Textual: a screen loads when it opens
        self.app.push_screen(KVEventsScreen(self.loaded))

    def action_verify_kv(self) -> None:
        self.notify("KV check: running the tiny model…", timeout=2)
        self._verify_kv(self.loaded.session)

    @work(thread=True, exclusive=True, group="kv")
    def _verify_kv(self, session: Session) -> None:
        lines = verify_session(session)
        self.app.call_from_thread(self._show_kv_report, lines)

    def _show_kv_report(self, lines: list[str]) -> None:
        if self.is_attached:
            self.app.push_screen(KVReport(lines))

    # ------------------------------------------------------------------- others

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.shown_keys(self.BINDINGS)))

    def shown_keys(self, bindings) -> list:
        """``bindings`` less those this screen hides now (b's other engine's switch)."""
        return [b for b in bindings if self.check_action(b.action.partition("(")[0], ()) is not False]

    def action_home(self) -> None:
        self.leave_then(self._go_home, "the home screen")

    def remember_position(self) -> None:
        """Leaving: a lesson keeps its place here (``LessonScreen``); a sandbox has none."""

    def _go_home(self) -> None:
        self.playing = False
        self.app.open_home()

    def action_quit_app(self) -> None:
        self.app.action_quit()   # asks every screen that holds work, this one first
