"""The radixviz Textual app: home, sandbox and lessons share one stepper screen.

The entry point exits with ``app.return_code`` so a crash exits non-zero.
"""
from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable

from textual.app import SystemCommand

from radixviz.lessons import LessonError
from radixviz.lessons.challenges.challenge import load_challenges
from radixviz.lessons.progress.places import data_dir
from radixviz.lessons.progress import Progress
from radixviz.settings import SERVED_ENV, served_caps
from radixviz.tui.app_base import RadixvizAppBase
from radixviz.tui.browser_tab import BrowserTab
from radixviz.tui.palette import screen_commands
from radixviz.tui.sandbox_work import KeepsWork


def session_loader(pool_size: int = 128, buggy: bool = False, device: str = "auto",
                   script_path: str | None = None, script_text: str | None = None, ops=(),
                   engine_options: dict | None = None, history_mb: float | None = None,
                   on_session=None):
    """A function for the stepper's worker: build a Session, apply the script; return
    (session, first error line or None). Runs off the UI thread (it imports torch).
    ``on_session(session)`` sees the session before the script runs (``sandbox --publish``)."""
    def load():
        from radixviz.script import ScriptError, Session, load_script, parse_script   # torch, the engine
        limit = {} if history_mb is None else {"history_mb": history_mb}   # None: the default
        session = Session(pool_size, buggy, device, **limit, **(engine_options or {}))
        if on_session is not None:
            on_session(session)
        try:
            todo = list(ops)
            if script_path is not None:
                todo += load_script(script_path)
            if script_text is not None:
                todo += parse_script(script_text, "<example>")
            for op in todo:
                session.apply(op)
        except ScriptError as exc:
            return session, str(exc)
        return session, None
    return load


async def wait_until_ready(app, pilot) -> None:
    """Under Pilot (tests, benchmarks, screenshots): wait until the keys act on a loaded
    engine. The workers (engine, lessons) start only after the first paint, so wait for
    that first, then for them, then for the screen to settle."""
    while app.first_paint is None:
        await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


class RadixvizApp(BrowserTab, RadixvizAppBase):   # app_base.py: what the screens may ask of it
    # absolute: Textual resolves a relative CSS_PATH beside the module of the subclass
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "radixviz"
    NOTIFICATION_TIMEOUT = 3   # for the notes that name no timeout; what must stay has a pane
    # sandbox --publish: sees each session before its script runs
    on_session: Callable[[Any], None] | None = None

    def __init__(self, start: str = "home", *, script: str | None = None, script_text: str | None = None,
                 buggy: bool = False, pool_size: int = 128, device: str = "auto", lesson=None,
                 lesson_dirs=(), export_dir: str | Path | None = None, preload_engine: bool = True,
                 scheduler_options: dict | None = None, quiz_options: dict | None = None,
                 engine_options: dict | None = None, cluster_options: dict | None = None,
                 history_mb: float | None = None):
        """``scheduler_options``/``quiz_options``: keyword arguments of the first screen when
        ``start`` is "scheduler" (``radixviz simulate --app``) or "quiz" (``radixviz quiz``);
        ``history_mb``: the sandbox's history limit (None: settings.HISTORY_MB's default)."""
        super().__init__()
        # False under ``radixviz serve``: a session that never opens a stepper never loads torch
        self.preload_engine = preload_engine
        self.scheduler_options = dict(scheduler_options or {})
        self.quiz_options = dict(quiz_options or {})
        self.cluster_options = dict(cluster_options or {})   # simulate --app --workers N
        self.start, self.script, self.script_text = start, script, script_text
        self.buggy, self.pool_size, self.device = buggy, pool_size, device
        self.engine_options = engine_options  # engine 2024/2026, page size, eviction (sandbox)
        self.history_mb = history_mb
        self.lesson, self.lesson_dirs = lesson, tuple(lesson_dirs)
        self.export_dir = Path(export_dir) if export_dir else Path("radixviz-export")
        self.first_paint: float | None = None   # perf_counter() once the first screen is drawn
        self._after_paint: list = []
        self.served = os.environ.get(SERVED_ENV) == "1"
        self._caps = served_caps() if self.served else None
        if self._caps is not None and history_mb is None:
            self.history_mb = self._caps.history_mb     # the share of the class's memory budget

    @property
    def serving(self) -> bool:
        """This session is a browser tab (``radixviz serve``, or any Textual web driver):
        nothing typed names a path on this machine, files go to the browser, caps apply."""
        return self.served or self.is_web

    @property
    def caps(self):
        """The served session's limits (settings.SessionCaps, from the class's memory budget),
        or None on a terminal."""
        if self._caps is None and self.is_web:
            self._caps = served_caps()
        return self._caps if self.serving else None

    @property
    def session_folder(self) -> Path | None:
        """A served session's own folder (its scripts), or None on a terminal."""
        return data_dir() / "scripts" if self.serving else None

    @property
    def autosave_folder(self) -> Path:
        """Where sandboxes keep unsaved work (the student's own data dir when served)."""
        return data_dir() / "autosave"

    # Textual's is async; a sync action is called the same way (so are the palette's and q's)
    def action_quit(self) -> None:   # type: ignore[override]
        """ctrl+q, the palette's Quit and every screen's q: leave the app, but first let each
        screen that holds work (a sandbox's unsaved operations, a lesson's place) keep it
        or ask."""
        keepers = [s for s in reversed(self.screen_stack) if isinstance(s, KeepsWork)]
        self._leave_through(keepers)

    def _leave_through(self, keepers: list) -> None:
        if not keepers:
            self.exit()
            return
        keepers[0].leave_then(lambda: self._leave_through(keepers[1:]), "the shell (quit)")

    def on_mount(self) -> None:
        self.call_after_refresh(self._painted)
        if self.start == "sandbox":
            self.open_sandbox(self.script, self.script_text, title=self.script or "sandbox")
        elif self.start == "lesson":
            self.open_lesson(self.lesson)
        elif self.start == "scheduler":   # radixviz simulate --app
            self.open_scheduler(**self.scheduler_options)
        elif self.start == "cluster":     # radixviz simulate --app --workers N
            from radixviz.tui.screens.cluster import ClusterScreen   # Textual: a screen loads when it opens
            self.push_screen(ClusterScreen(**self.cluster_options))
        else:
            from radixviz.tui.screens.home import HomeScreen   # Textual: a screen loads when it opens
            self.push_screen(HomeScreen(self.lesson_dirs))
            if self.start == "quiz":
                # over the home screen, so "home" in a stepper opened by "show me" comes back here
                self.open_quiz(**self.quiz_options)

    def notify(self, message, *, title: str = "", severity="information", timeout=None,
               markup: bool = True) -> None:
        """Show one notification at a time: a new one takes the place of those still shown.
        Keys pressed in a burst (autoplay speed, undo, export) used to stack a column of
        toasts over the panes.

        Always plain text (``markup`` is ignored): messages quote paths, titles and what
        the learner typed, and a ``[/]`` in any of them must show, not crash the app."""
        self.clear_notifications()
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def action_help_quit(self) -> None:
        """ctrl+c: Textual's hint, in plain words (its own uses markup, shown plain here)."""
        self.notify("Press ctrl+q to quit the app", title="Do you want to quit?")

    def on_stepper_screen_loaded(self) -> None:
        # A loaded session's history is hundreds of thousands of immutable snapshot objects
        # that live as long as the app. Left in the collector's generations, a full
        # collection walks them all (~150 ms on the 300-node bench, landing on a random key:
        # step p95 about 2x worse in bench/tui.py); frozen, collections skip them.
        gc.freeze()

    def after_first_paint(self, callback) -> None:
        """Run ``callback`` once the first screen is on the terminal (now, if it already is).

        Work that imports torch waits for this: a thread importing it competes with the
        first paint for the GIL.
        """
        if self.first_paint is None:
            self._after_paint.append(callback)
        else:
            callback()

    def _painted(self) -> None:
        self.first_paint = time.perf_counter()
        self.torch_at_first_paint = "torch" in sys.modules
        if self.start == "home" and self.preload_engine:
            self._after_paint.append(self._warm_engine)   # while the learner reads the menu
        waiting, self._after_paint = self._after_paint, []
        for callback in waiting:
            callback()

    def _warm_engine(self) -> None:
        """Import torch and the engine in a thread, so the first screen opened is ready sooner."""
        def warm():
            # the panes' Textual widgets and renderers, off the UI thread
            import radixviz.tui.widgets.panes  # noqa: F401
        self.run_worker(warm, thread=True, group="warm")

    def open_sandbox(self, script: str | None = None, script_text: str | None = None,
                     title: str = "sandbox", screen_class=None) -> None:
        """A sandbox on a script file or text; ``screen_class``: a kind of StepperScreen
        (a quiz's "show me", which h leaves for the quiz)."""
        from radixviz.tui.screens.stepper import StepperScreen   # Textual: a screen loads when it opens
        load = session_loader(self.pool_size, self.buggy, self.device, script, script_text,
                              engine_options=self.engine_options, history_mb=self.history_mb,
                              on_session=self.on_session)
        self.push_screen((screen_class or StepperScreen)(load, title=title, export_dir=self.export_dir))

    def open_lesson(self, lesson) -> None:
        from radixviz.tui.screens.lesson import LessonScreen   # Textual: a screen loads when it opens
        # a lesson that opens with ``engine NAME`` shows that engine's empty tree and pools before
        # its first step, not the default engine's (whose switches it never uses)
        ops = lesson.operations
        first = {"engine": ops[0].mode} if ops and ops[0].name == "engine" and ops[0].mode else None
        load = session_loader(self.pool_size, self.buggy, self.device, engine_options=first)
        self.push_screen(LessonScreen(lesson, load, export_dir=self.export_dir))

    def open_challenges(self) -> None:
        """The challenge list (files are small: read them here, no worker needed)."""
        from radixviz.tui.screens.challenges import ChallengeListScreen   # Textual: a screen loads when it opens
        problems: list = []
        try:
            challenges = load_challenges(self.lesson_dirs, problems=problems)
        except LessonError as exc:
            challenges, problems = [], [exc]
        for problem in problems[:3]:
            self.notify(str(problem), severity="warning", timeout=6)
        self.push_screen(ChallengeListScreen(challenges, Progress.load()))

    def open_challenge(self, challenge) -> None:
        from radixviz.tui.screens.challenge import ChallengeScreen   # Textual: a screen loads when it opens
        load = session_loader(self.pool_size, False, self.device, script_text=challenge.start or None)
        self.push_screen(ChallengeScreen(challenge, load, export_dir=self.export_dir))

    def get_system_commands(self, screen) -> Iterable[SystemCommand]:
        """The palette: Textual's commands, then the keys of the screen in front."""
        yield from super().get_system_commands(screen)
        yield from screen_commands(screen)

    def open_home(self) -> None:
        """Back to the home screen: the one under this screen, or a new one."""
        from radixviz.tui.screens.home import HomeScreen   # Textual: a screen loads when it opens
        if any(isinstance(s, HomeScreen) for s in self.screen_stack):
            self.pop_screen()
        else:
            self.switch_screen(HomeScreen(self.lesson_dirs))

    def open_quiz(self, **options) -> None:
        """The quiz screen; ``options`` go to QuizScreen (a ready quiz, save, exit_when_done)."""
        from radixviz.tui.screens.quiz import QuizScreen   # Textual: a screen loads when it opens
        self.push_screen(QuizScreen(**options))

    def open_scheduler(self, **options) -> None:
        """The scheduler screen; ``options`` go to SchedulerScreen (settings, autorun, ...)."""
        from radixviz.tui.screens.scheduler import SchedulerScreen   # Textual: a screen loads when it opens
        self.push_screen(SchedulerScreen(**options))


def run_quiz_app(quiz, save: bool = True) -> int:
    """Run the app on this quiz (``radixviz quiz`` without --plain); leaving it quits."""
    app = RadixvizApp("quiz", device="cpu",
                      quiz_options={"quiz": quiz, "save": save, "exit_when_done": True})
    app.run()
    return app.return_code or 0
