"""Helpers for the TUI tests: start the app on a script and read what its panes show."""
from __future__ import annotations

from contextlib import asynccontextmanager

from rich.console import Console

from radixviz.tui.app import RadixvizApp
from radixviz.tui.app import wait_until_ready as wait_ready  # noqa: F401 - the tests' name

CHAPTER = 'insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatch "Hello_world"\n'


@asynccontextmanager
async def stepper(tmp_path, script: str | None = CHAPTER, size=(100, 32), **options):
    """A sandbox app on ``script`` with its engine loaded; yields (app, pilot)."""
    app = RadixvizApp("sandbox", script_text=script, device="cpu", export_dir=tmp_path / "export",
                      **options)
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        assert app.screen.model is not None, "the stepper did not load its session"
        yield app, pilot


@asynccontextmanager
async def lesson_stepper(size=(100, 40)):
    """The first lesson in the stepper with its engine loaded; yields (app, pilot, lesson)."""
    from radixviz.lessons import load_lessons
    lesson = load_lessons()[0]
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        yield app, pilot, lesson


def plain(renderable, width: int = 200) -> str:
    """A renderable as monochrome text."""
    console = Console(width=width, color_system=None, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text()


def status(app) -> str:
    return plain(app.screen.query_one("#status-line").content)


def narration(app) -> str:
    return plain(app.screen.query_one("#narration-body").content, width=120)


def tree_text(app) -> str:
    return "\n".join(line.plain for line in app.screen.query_one("#tree-pane")._lines)


def code_text(app) -> str:
    return plain(app.screen.query_one("#code-pane").content, width=120)


def view(app) -> tuple:
    """Everything the stepper's panes show for the current frame, as text."""
    return tree_text(app), code_text(app), narration(app), status(app)


def notifications(app) -> list[str]:
    return [str(n.message) for n in app._notifications]
