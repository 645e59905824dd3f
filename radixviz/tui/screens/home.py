"""The home screen: the sandbox, the #7 example, the lessons and the quiz.

Imports neither torch nor the engine: it paints at once while a worker warms them up.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from radixviz.lessons import load_lessons
from radixviz.lessons.progress import Progress
from radixviz.script import parse_script
from radixviz.script.sides import engine_sides
from radixviz.tui.screens.compare import CompareScreen
from radixviz.tui.screens.help import HelpScreen
from radixviz.tui.widgets.footer import FittingFooter

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from textual import events
    from textual import getters

    from radixviz.tui.app_base import RadixvizAppBase


INTRO = ("Watch SGLang's first RadixAttention cache work, one micro-step at a time: insert, match, "
         "split, evict and reference counts on a live torch KV pool, with the engine's own code "
         "beside the tree.")
EXAMPLE = 'insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatch "Hello_world"\n'
# the comparison across time in docs/engines/2026.md: pages of 2 drop odd tails, and the two evict in another order
ACROSS_TIME = 'insert "Hello_world"\ninsert "Hello_there"\nlock "Hello_wo"\nevict 100\n'



class HomeScreen(Screen):
    if TYPE_CHECKING:   # for mypy: this screen runs in the radixviz app (Textual says App[Any])
        app = getters.app(RadixvizAppBase)
    BINDINGS = [
        # help and quit first: on a narrow terminal the footer keeps the keys listed first
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("q", "quit_app", "Quit"),
        Binding("s", "sandbox", "Sandbox"),
        Binding("x", "example", "#7 example"),
        Binding("v", "example_compare", "#7 side by side", show=False),
        Binding("t", "across_time", "2024 beside 2026", show=False),
        Binding("z", "quiz", "Quiz"),
        Binding("c", "challenges", "Challenges"),
        Binding("w", "scheduler", "Scheduler"),
    ]

    def __init__(self, lesson_dirs: Sequence[Path] = ()):
        super().__init__()
        self.lesson_dirs = tuple(lesson_dirs)
        self.lessons: list = []
        self.completed: set = set()     # ids of the lessons the learner's progress marks completed

    def compose(self) -> ComposeResult:
        with Vertical(id="home-box") as box:
            box.border_title = "radixviz"
            yield Static(INTRO, id="home-intro")
            yield Static("", id="home-warning")
            yield OptionList(*self._options(), id="home-menu")
            yield Static("↑/↓ and enter to open · ? help · q quit", classes="hint")
        yield FittingFooter()

    def _options(self) -> list:
        options = [Option("Sandbox: an empty cache, type your own operations", id="sandbox"),
                   Option("Sandbox: the #7 example (two inserts, then a match)", id="example"),
                   Option("The #7 example with both matchers side by side", id="example-compare"),
                   Option("Across time: one script on the 2024 and the 2026 engine side by side",
                          id="across-time")]
        if self.lessons:
            # a title comes from a lesson file: plain text, never markup
            options += [Option(Text(f"Lesson {l.number}: {l.title}" + ("  ✓" if l.id in self.completed else "")),
                               id=f"lesson:{i}") for i, l in enumerate(self.lessons)]
        else:
            options.append(Option("Lessons: loading…", id="lessons-loading", disabled=True))
        options.append(Option("Quiz: test yourself", id="quiz"))
        options.append(Option("Challenges: reach a goal by driving the cache, graded by the engine",
                              id="challenges"))
        options.append(Option("Scheduler: a workload batch by batch (queue, batch, tree, pool)",
                              id="scheduler"))
        return options

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.app.after_first_paint(self._load_lessons)

    def on_resize(self, event: events.Resize) -> None:
        # the menu takes what the title, intro, hint and footer leave (10 rows at 80 columns):
        # at 80x24 it scrolls as before, from about 30 rows every entry is in view
        self.query_one(OptionList).styles.max_height = max(6, event.size.height - 10)

    @work(thread=True, exclusive=True, group="lessons")
    def _load_lessons(self) -> None:
        problems: list = []
        try:
            lessons = load_lessons(self.lesson_dirs, problems=problems)
        except Exception as exc:  # noqa: BLE001 - a broken lesson folder must not stop the app
            lessons, problems = [], [exc]
        self.app.call_from_thread(self._show_lessons, lessons, problems)

    def _read_completed(self) -> None:
        """The ✓ of each completed lesson; what is wrong with the progress file, on screen
        (it stays until the file is fixed: every good record is still counted)."""
        progress = Progress.load()
        self.completed = set(progress.lessons)
        warning = self.query_one("#home-warning", Static)
        warning.update(Text(f"⚠ {progress.warning}") if progress.warning else "")
        warning.display = bool(progress.warning)

    def on_screen_resume(self) -> None:
        """Back from a lesson: its ✓ may be new."""
        if self.lessons:
            self._show_lessons(self.lessons, [])

    def _show_lessons(self, lessons, problems) -> None:
        self.lessons = lessons
        self._read_completed()
        menu = self.query_one(OptionList)
        highlighted = menu.highlighted
        menu.clear_options()
        menu.add_options(self._options())
        if not lessons:
            menu.replace_option_prompt("lessons-loading", "Lessons: none found")
        menu.highlighted = highlighted if highlighted is not None else 0
        for problem in problems[:3]:
            self.notify(str(problem), severity="warning", timeout=6)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        choice = event.option.id or ""
        if choice == "sandbox":
            self.action_sandbox()
        elif choice == "example":
            self.action_example()
        elif choice == "example-compare":
            self.action_example_compare()
        elif choice == "across-time":
            self.action_across_time()
        elif choice == "quiz":
            self.action_quiz()
        elif choice == "challenges":
            self.action_challenges()
        elif choice == "scheduler":
            self.action_scheduler()
        elif choice.startswith("lesson:"):
            self.app.open_lesson(self.lessons[int(choice.split(":")[1])])

    def action_sandbox(self) -> None:
        self.app.open_sandbox()

    def action_example(self) -> None:
        self.app.open_sandbox(script_text=EXAMPLE, title="the #7 example")

    def action_example_compare(self) -> None:
        self.app.push_screen(CompareScreen(parse_script(EXAMPLE, "the #7 example"), 128,
                                           getattr(self.app, "device", "auto")))

    def action_across_time(self) -> None:
        self.app.push_screen(CompareScreen(parse_script(ACROSS_TIME, "across time"), 128,
                                           getattr(self.app, "device", "auto"), columns=engine_sides(page_size=2)))

    def action_scheduler(self) -> None:
        self.app.open_scheduler()

    def action_quiz(self) -> None:
        self.app.open_quiz()

    def action_challenges(self) -> None:
        self.app.open_challenges()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.BINDINGS))

    def action_quit_app(self) -> None:
        self.app.action_quit()   # a sandbox below may hold unsaved work: it asks first
