"""The radixviz Textual app: home, sandbox and lessons share one stepper screen.

The entry point exits with ``app.return_code`` so a crash exits non-zero.
"""
from __future__ import annotations

from pathlib import Path

from textual.app import App

from radixviz.tui.palette import SafeCommandPalette, ScreenActions


def session_loader(pool_size: int = 128, buggy: bool = False, device: str = "auto",
                   script_path: str | None = None, script_text: str | None = None, ops=()):
    """A function for the stepper's worker: build a Session, apply the script; return
    (session, first error line or None). Runs off the UI thread (it imports torch)."""
    def load():
        from radixviz.script import ScriptError, Session, load_script, parse_script
        session = Session(pool_size, buggy, device)
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
        await pilot.pause(0.01)
    await app.workers.wait_for_complete()
    await pilot.pause()


class RadixvizApp(App):
    # absolute: Textual resolves a relative CSS_PATH beside the module of the subclass
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "radixviz"
    COMMANDS = App.COMMANDS | {ScreenActions}

    def __init__(self, start: str = "home", *, script: str | None = None, script_text: str | None = None,
                 buggy: bool = False, pool_size: int = 128, device: str = "auto", lesson=None,
                 lesson_dirs=(), export_dir: str | Path | None = None, preload_engine: bool = True):
        super().__init__()
        # False under ``radixviz serve``: a session that never opens a stepper never loads torch
        self.preload_engine = preload_engine
        self.start, self.script, self.script_text = start, script, script_text
        self.buggy, self.pool_size, self.device = buggy, pool_size, device
        self.lesson, self.lesson_dirs = lesson, tuple(lesson_dirs)
        self.export_dir = Path(export_dir) if export_dir else Path("radixviz-export")
        self.first_paint: float | None = None   # perf_counter() once the first screen is drawn
        self._after_paint: list = []

    def on_mount(self) -> None:
        self.call_after_refresh(self._painted)
        if self.start == "sandbox":
            self.open_sandbox(self.script, self.script_text, title=self.script or "sandbox")
        elif self.start == "lesson":
            self.open_lesson(self.lesson)
        elif self.start == "scheduler":   # radixviz simulate --app
            self.open_scheduler(**getattr(self, "scheduler_options", {}))
        else:
            from radixviz.tui.screens.home import HomeScreen
            self.push_screen(HomeScreen(self.lesson_dirs))

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
        import sys
        import time
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
            import radixviz.tui.widgets.panes  # noqa: F401
        self.run_worker(warm, thread=True, group="warm")

    def open_sandbox(self, script: str | None = None, script_text: str | None = None,
                     title: str = "sandbox") -> None:
        from radixviz.tui.screens.stepper import StepperScreen
        load = session_loader(self.pool_size, self.buggy, self.device, script, script_text)
        self.push_screen(StepperScreen(load, title=title, export_dir=self.export_dir))

    def open_lesson(self, lesson) -> None:
        from radixviz.tui.screens.stepper import StepperScreen
        load = session_loader(self.pool_size, self.buggy, self.device)
        self.push_screen(StepperScreen(load, title=f"lesson {lesson.number}: {lesson.title}",
                                       lesson=lesson, export_dir=self.export_dir))

    def open_challenges(self) -> None:
        """The challenge list (files are small: read them here, no worker needed)."""
        from radixviz.lessons import LessonError
        from radixviz.lessons.challenge import load_challenges
        from radixviz.lessons.progress import Progress
        from radixviz.tui.screens.challenges import ChallengeListScreen
        problems: list = []
        try:
            challenges = load_challenges(self.lesson_dirs, problems=problems)
        except LessonError as exc:
            challenges, problems = [], [exc]
        for problem in problems[:3]:
            self.notify(str(problem), severity="warning", timeout=6)
        self.push_screen(ChallengeListScreen(challenges, Progress.load()))

    def open_challenge(self, challenge) -> None:
        from radixviz.tui.screens.challenge import ChallengeScreen
        load = session_loader(self.pool_size, False, self.device, script_text=challenge.start or None)
        self.push_screen(ChallengeScreen(challenge, load, export_dir=self.export_dir))

    def action_command_palette(self) -> None:
        if self.use_command_palette and not SafeCommandPalette.is_open(self):
            self.push_screen(SafeCommandPalette(id="--command-palette"))

    def search_commands(self, commands, placeholder: str = "Search for commands…"):
        from textual.command import SimpleProvider
        return self.push_screen(SafeCommandPalette(
            providers=[SimpleProvider(self.screen, commands)], placeholder=placeholder))

    def search_themes(self) -> None:
        from textual.theme import ThemeProvider
        self.push_screen(SafeCommandPalette(providers=[ThemeProvider], placeholder="Search for themes…"))

    def open_quiz(self) -> None:
        from radixviz.tui.screens import quiz
        self.push_screen(quiz.QuizScreen())

    def open_scheduler(self, **options) -> None:
        """The scheduler screen; ``options`` go to SchedulerScreen (settings, autorun, ...)."""
        from radixviz.tui.screens.scheduler import SchedulerScreen
        self.push_screen(SchedulerScreen(**options))
