"""A lesson in the stepper: its words, its predictions and its operations, walked in order.

→ walks the lesson (``LessonWalk``): a paragraph, a prediction docked beside the tree, the
operations step by step, the answers with their reasons, the next paragraph, … the end.
A paragraph longer than its pane is paged through by → before the walk goes on, so no line
is passed over. ← walks back and shows what was shown there. Typing, undo and the other
matcher open a sandbox copy: the lesson's own operations never change under it.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import events
from textual.css.query import NoMatches
from textual.screen import Screen

from radixviz.lessons.progress import Progress, mark_lesson_completed, save_lesson_position
from radixviz.tui.lesson_player import LessonWalk
from radixviz.tui.screens.stepper import StepperScreen
from radixviz.tui.screens.stepper_keys import LESSON_KEYS

if TYPE_CHECKING:
    from radixviz.lessons import Lesson
    from radixviz.script.frames import Frame
    from radixviz.script.session import Session
    from radixviz.tui.lesson_player import Part
    from radixviz.tui.stepper_model import StepperModel
    from radixviz.tui.widgets.lesson_page import LessonPage
    from radixviz.tui.widgets.lesson_panes import LessonPanes
    from radixviz.tui.widgets.prediction import PredictionDock

LESSON_OVER = "End of the lesson: h goes home; : tries your own operations in a sandbox copy"
ANSWER_FIRST = "answer the prediction first (its letter, or type it), or press esc to skip it"


class LessonScreen(StepperScreen, inherit_bindings=False):
    ASK_BEFORE_LEAVING = False   # the operations are the lesson's; leaving keeps the place
    # not inherited: the footer lists keys in this order, and reading comes right after stepping
    BINDINGS = [*Screen.BINDINGS, *LESSON_KEYS]
    # below either size a paragraph gets the whole screen (the reading layout)
    SMALL_WIDTH, SMALL_HEIGHT = 100, 32
    # the first page is read while the engine loads: panes, text and a free pool before it
    PANES_BEFORE_ENGINE = True
    SCROLLED_FIRST = "#lesson-pane"   # ↑ ↓ pgup pgdn: the lesson's text while tab has picked no pane

    def __init__(self, lesson: Lesson, load: Callable[[], tuple[Session, str | None]],
                 export_dir: Path | None = None):
        super().__init__(load, title=f"lesson {lesson.number}: {lesson.title}", export_dir=export_dir)
        self.lesson = lesson
        self.walk = LessonWalk(lesson)
        self.reading: bool | None = None   # r's choice for the stop shown; None: by the screen's size
        self._before: Frame | None = None  # the cache before the first operations
        self._kept_block = 0               # the place last saved as the learner went on
        self._place_warned = False         # a "could not save" warning was shown once
        self._started = False              # the walk was begun (before the engine, or with it)
        self._resume_to: tuple | None = None   # (block, right, asked) chosen before the engine came

    def make_panes(self) -> LessonPanes:
        from radixviz.tui.widgets.lesson_panes import LessonPanes   # Textual widgets, without torch
        return LessonPanes(id="stepper-panes")

    def show_before_engine(self, panes) -> None:
        """The panes are up before the engine: begin the walk (its first page needs none)."""
        self._start()

    def watch_model(self, model: StepperModel | None) -> None:
        if model is None:
            return
        self._before = model.session.live_frame()
        if not self._started:
            self._start()
        elif self._resume_to is not None or self.walk.at < 0:
            self._begin()   # a resume chosen, or a first stop that needed the engine
        else:
            self.model_changed()   # the page read meanwhile, now beside the engine's panes

    # ------------------------------------------------------------ starting

    def _start(self) -> None:
        """Play the lesson from its start, or offer to resume where the learner left it."""
        self._started = True
        saved = Progress.load().positions.get(self.lesson.id)
        block = saved.get("block") if isinstance(saved, dict) else None
        predicted = saved.get("predicted") if isinstance(saved, dict) else None
        if not isinstance(block, int) or not 0 < block < len(self.lesson.blocks):
            self._begin()
            return

        def chosen(resume: bool | None) -> None:
            if resume:
                try:   # the score so far; a record that is not two counts restarts it
                    right, asked = (int(n) for n in (list(predicted or []) + [0, 0])[:2])
                except (TypeError, ValueError):
                    right = asked = 0
                self._resume_to = (block, right, asked)
            self._begin()
        from radixviz.tui.screens.resume import ResumeScreen   # Textual: a dialog loads when it opens
        self.app.push_screen(ResumeScreen(self.lesson, block), chosen)

    def _begin(self) -> None:
        """Show the first stop (or the one resumed at): without the engine only a first stop
        that runs nothing can be shown; the rest waits for it (``watch_model``)."""
        if self.model is None and (self._resume_to is not None or self.walk.plan[0].kind == "ops"):
            return
        if self._resume_to is not None:
            self.walk.fast_forward(self.loaded, *self._resume_to)
            self._resume_to = None
        self._forward()

    # ------------------------------------------------------------ drawing

    @property
    def small(self) -> bool:
        width, height = self.app.size
        return width < self.SMALL_WIDTH or height < self.SMALL_HEIGHT

    def _frame(self) -> Frame | None:
        """The frame the stop shows: a step of its operations, else the last step before it
        (None before the lesson's first operations)."""
        if self.walk.frames() is not None:
            return self.loaded.frame
        shown = self.walk.shown_frame()
        return None if shown is None else self.loaded.frames[shown]

    def status_notes(self) -> list[tuple[str, str]]:
        return [self.walk.progress] + super().status_notes()

    def refresh_view(self) -> None:
        """Draw the stop shown; before the engine has loaded, its page beside the empty tree."""
        if not self.is_attached or self.walk.stop is None:
            return
        try:
            from radixviz.tui.widgets.lesson_panes import LessonPanes   # Textual widgets, loaded by make_panes
            panes = self.query_one("#stepper-panes", LessonPanes)
        except NoMatches:
            return   # the screen is closing and its panes are gone
        stop, waiting = self.walk.stop, self.walk.waiting
        stepping = self.walk.frames() is not None
        parts, own = self.walk.page()
        pointers = self.walk.pointers()
        # a paragraph that points at the picture is read beside it, on any screen
        reading = self.reading if self.reading is not None else \
            self.small and not stepping and waiting is None and not pointers \
            and not self._fits_beside(parts[own or 0:])
        panes.choose_layout(reading=reading, asking=waiting is not None, stepping=stepping, small=self.small)
        dock = cast("PredictionDock", panes.query_one("#predict-dock"))
        if waiting is not None and dock.predict is not waiting:
            dock.ask(waiting)
        elif waiting is None:
            dock.predict = None
            if self.focused is not None and dock in self.focused.ancestors_with_self:
                self.set_focus(None)   # the stepping keys need no focus
        title = "lesson · the end" if stop.kind == "end" else f"lesson {self.lesson.number}"
        if self.model is None:
            status = f"{self.walk.progress[0]} · loading the engine (torch)…"
            panes.show_loading(parts, own, title, self.app.pool_size, status)
            return
        panes.show(self.model, self._frame(), parts, own, self.status_notes(), title, self._before,
                   () if reading else pointers)

    def _fits_beside(self, parts: list[Part]) -> bool:
        """Whether ``parts`` fit in the lesson pane beside the tree, with no scrolling: a small
        screen reads them there, with the tree in view, rather than across the screen."""
        width, height = self.app.size
        # half the screen, less the border, padding and scrollbar gutter; less the two
        # bottom lines and the border
        from radixviz.tui.widgets.lesson_page import rows_for   # Textual widgets, loaded with the panes
        return rows_for(parts, width // 2 - 5, self.app.console) <= height - 4

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_view)   # the layout follows the terminal's size

    def _page(self) -> LessonPage:
        return cast("LessonPage", self.query_one("#lesson-pane"))

    # ------------------------------------------------------------ walking

    def _forward(self) -> None:
        # without the engine (the first page, read while it loads) no operations can run:
        # the keys that would go on are held until it is there (early_keys)
        stop, first_time = self.walk.forward(self.model)
        if stop is None:
            self.notify(ANSWER_FIRST if self.walk.waiting is not None else LESSON_OVER, timeout=4)
            return
        self.reading = None
        frames = self.walk.frames()
        if self.model is None:
            self.refresh_view()
            return
        if frames is not None:
            self.loaded.go(frames[0])
        elif (shown := self.walk.shown_frame()) is not None:
            self.loaded.go(shown)
        if first_time and stop.kind == "ops" and self.walk.error:
            self._show_error(self.walk.error)
        if stop.kind == "ask" and self.walk.waiting is not None:
            self.playing = False   # a prediction deserves a pause
        if first_time and stop.kind == "end":
            self._record_completed()
        elif first_time and self.walk.resume_block > self._kept_block:
            # keep the place as the learner goes, not only when a key leaves the lesson: a
            # terminal or a browser tab closed mid-lesson leaves no chance to save it then
            self._kept_block = self.walk.resume_block
            self.remember_position(quiet=self._place_warned)
        self.model_changed()

    def _back(self) -> None:
        if not self.walk.back():
            return
        self.reading = None
        frames = self.walk.frames()
        if frames is not None:
            self.loaded.go(frames[1])
        elif (shown := self.walk.shown_frame()) is not None:
            self.loaded.go(shown)
        self.model_changed()

    def _go_to(self, at: int) -> None:
        while self.walk.at > at:
            self._back()
        while self.walk.at < at and self.walk.waiting is None:
            self._forward()

    def action_next(self) -> None:
        if self.walk.stop is None:
            return
        if self.walk.waiting is not None:
            self.notify(ANSWER_FIRST, timeout=4)
            return
        frames = self.walk.frames()
        if frames is not None and self.position < frames[1]:
            self.position += 1
        elif frames is None and self._page().more_below:
            self._page().page_down()
        else:
            self._forward()

    def action_prev(self) -> None:
        frames = self.walk.frames()
        if frames is not None and self.position > frames[0]:
            self.position -= 1
        else:
            self._back()

    def action_next_op(self) -> None:
        frames = self.walk.frames()
        if frames is not None and self.position < frames[1]:
            self.position = min(self.loaded.next_op_start(), frames[1])
        else:
            self.action_next()

    def action_prev_op(self) -> None:
        frames = self.walk.frames()
        if frames is not None and self.position > frames[0]:
            self.position = max(self.loaded.prev_op_start(), frames[0])
        else:
            self._back()

    def action_first(self) -> None:
        """The start of this block's operations; there already, the start of the page."""
        frames = self.walk.frames()
        if frames is not None and self.position > frames[0]:
            self.position = frames[0]
            return
        if self.walk.stop is None:
            return
        page = self.walk.stop.page
        self._go_to(min(i for i, s in enumerate(self.walk.plan) if s.page == page))

    def action_last(self) -> None:
        """The end of this block's operations; there already, the furthest point reached."""
        frames = self.walk.frames()
        if frames is not None and self.position < frames[1]:
            self.position = frames[1]
            return
        self._go_to(self.walk.reached)
        frames = self.walk.frames()
        if frames is not None:
            self.position = frames[1]

    def _tick(self) -> None:
        """Autoplay plays operations, and pauses where it arrives at something to read or
        answer (started on a paragraph, it first goes on from there)."""
        if self.app.screen is not self:
            return
        frames = self.walk.frames()
        if frames is not None and self.position < frames[1]:
            self.position += 1
            return
        self._forward()
        if self.walk.frames() is None or self.walk.waiting is not None:
            self.playing = False

    def action_toggle_reading(self) -> None:
        if self.walk.stop is None:
            return
        stepping = self.walk.frames() is not None
        shown = self.reading if self.reading is not None else self.small and not stepping
        self.reading = not shown
        self.refresh_view()

    # ------------------------------------------------------------ predictions

    def on_key(self, event: events.Key) -> None:
        """While a question with options is docked, its letters pick them even when the focus
        is elsewhere (a pane tab picked, a click): a shown question's ``a`` is option a, never
        autoplay. (The stepper's own key handling then does not run for the key.)"""
        found = self.query("#predict-dock")
        if self.walk.waiting is None or not found or not event.character:
            return
        dock = cast("PredictionDock", found.first())
        if self.focused is not None and dock in self.focused.ancestors_with_self:
            return   # the dock has the keys: its own bindings pick
        if dock.take_letter(event.character):
            event.stop()
            event.prevent_default()

    def on_prediction_dock_replied(self, message: PredictionDock.Replied) -> None:
        message.stop()
        if self.walk.waiting is None:
            return
        verdict = self.walk.answer(message.reply, message.said)
        if not verdict.understood:
            cast("PredictionDock", self.query_one("#predict-dock")).refuse(verdict.reason)
            return
        self._forward()       # on to what answers it: the operations (or the next question)

    def on_prediction_dock_skipped(self, message: PredictionDock.Skipped) -> None:
        message.stop()
        self.walk.skip()
        self._forward()

    # ------------------------------------------------------------ the sandbox copy

    def _sandbox_copy(self, then: str | tuple[str, tuple[str, int]]) -> None:
        """Typing, undo, the other matcher and node actions would change the lesson's
        operations, and with them what its predictions are answered on: they happen in a
        copy instead, which h leaves to come back here."""
        if self.model is None:
            return
        self.playing = False
        from radixviz.tui.screens.side_sandbox import LessonCopy   # Textual: a screen loads when it opens
        self.app.push_screen(LessonCopy(self, then))

    def action_op_input(self) -> None:
        self._sandbox_copy("op_input")

    def action_undo(self) -> None:
        self._sandbox_copy("undo")

    def action_redo(self) -> None:
        self._sandbox_copy("redo")

    def action_toggle_matcher(self) -> None:
        self._sandbox_copy("toggle_matcher")

    def action_toggle_head_bugs(self) -> None:
        self._sandbox_copy("toggle_head_bugs")

    def action_open_script(self) -> None:
        self._sandbox_copy("open_script")

    def _node_action(self, choice: tuple[str, int] | None) -> None:
        if choice:
            self._sandbox_copy(("node", choice))

    def action_help(self) -> None:
        from radixviz.tui.screens.help import LESSON_GUIDE, HelpScreen   # Textual: a screen loads when it opens
        self.app.push_screen(HelpScreen(self.shown_keys(LESSON_KEYS), LESSON_GUIDE))

    # ------------------------------------------------------------ progress

    def remember_position(self, quiet: bool = False) -> None:
        """Keep the place (on leaving, and at each new block), so opening the lesson again
        can resume; ``quiet``: a warning already shown is not shown again."""
        walk = self.walk
        if walk.completed or walk.reached < 1:
            return
        warning = save_lesson_position(self.lesson, walk.resume_block, walk.right, walk.asked)
        if warning and not quiet:
            self._place_warned = True
            self.notify(warning, severity="warning", timeout=6)

    def _record_completed(self) -> None:
        """The lesson was walked to its end: the learner's progress says so, with the score
        (the page's last words say it on screen; a toast would cover them)."""
        self.walk.completed = True
        warning = mark_lesson_completed(self.lesson, self.walk.right, self.walk.asked)
        if warning:
            self.notify(warning, severity="warning", timeout=6)
