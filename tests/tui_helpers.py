"""Helpers for the TUI tests: start the app on a script and read what its panes show."""
from __future__ import annotations

import shutil
import time
from contextlib import asynccontextmanager
from weakref import WeakKeyDictionary

import pytest
from rich.console import Console

from radixviz.tui.app import RadixvizApp
from radixviz.tui.app import wait_until_ready as wait_ready  # noqa: F401 - the tests' name

# an SVG or PNG needs Graphviz's dot; without it the app says how to install it (tested apart)
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="needs Graphviz's dot: apt-get install graphviz")

CHAPTER = 'insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatch "Hello_world"\n'


@asynccontextmanager
async def stepper(tmp_path, script: str | None = CHAPTER, size=(100, 32), toasts: bool = False,
                  **options):
    """A sandbox app on ``script`` with its engine loaded; yields (app, pilot). ``toasts``:
    draw notifications on screen (Pilot leaves them out unless asked)."""
    app = RadixvizApp("sandbox", script_text=script, device="cpu", export_dir=tmp_path / "export",
                      **options)
    watch_notifications(app)
    async with app.run_test(size=size, notifications=toasts) as pilot:
        await wait_ready(app, pilot)
        assert app.screen.model is not None, "the stepper did not load its session"
        yield app, pilot


@asynccontextmanager
async def lesson_stepper(size=(100, 40)):
    """The first lesson in the stepper with its engine loaded; yields (app, pilot, lesson)."""
    from radixviz.lessons import load_lessons
    lesson = load_lessons()[0]
    app = RadixvizApp("lesson", lesson=lesson, device="cpu")
    watch_notifications(app)
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
    """The whole tree, the lines scrolled out of view too."""
    return "\n".join(line.plain for line in app.screen.query_one("#tree-pane").lines)


def code_text(app) -> str:
    return plain(app.screen.query_one("#code-pane").content, width=120)


def view(app) -> tuple:
    """Everything the stepper's panes show for the current frame, as text."""
    return tree_text(app), code_text(app), narration(app), status(app)


_SEEN: WeakKeyDictionary = WeakKeyDictionary()


def watch_notifications(app) -> None:
    """From now on, note the message of every notification ``app`` shows (screens and
    widgets notify through ``app.notify``)."""
    seen = _SEEN.setdefault(app, [])
    show = app.notify

    def notify(message, *args, **kwargs):
        seen.append(str(message))
        return show(message, *args, **kwargs)
    app.notify = notify


def notifications(app) -> list[str]:
    """The messages ``app`` has notified since ``watch_notifications``, oldest first."""
    return _SEEN[app]


async def wait_until(pilot, condition, timeout: float = 180.0) -> None:
    """Let the app run until ``condition()`` holds (a timer fired, a screen opened), then
    until the screen shows it. Waits on the condition itself, never for a fixed time;
    ``timeout`` only catches a hang (three minutes: no machine is that slow for one step)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the app never reached the state the test waits for"
        await pilot.pause()
    # the condition may have turned true after the last repaint (a worker's call, a timer):
    # one more pause lays the screen out, so what a test reads next is what is painted
    await pilot.pause()


def painted_strips(app) -> list:
    """Every row of the terminal as the app paints it now (toasts and all): a Strip of
    styled segments each. The one place the tests read Textual's private compositor:
    Textual offers no public way to read the painted screen as text (``export_screenshot()``
    turns this same compositor output into SVG; ``Screen.get_style_at`` gives a cell's
    style, not its character)."""
    return app.screen._compositor.render_strips()


def screen_rows(app) -> list[str]:
    """The text of every row of the terminal as the app paints it now (toasts and all)."""
    return ["".join(segment.text for segment in strip) for strip in painted_strips(app)]


def pane_rows(app, selector: str) -> list[str]:
    """The rows of the screen a widget covers, its border included, cut to its columns."""
    region = app.screen.query_one(selector).region
    return [row[region.x:region.right] for row in screen_rows(app)[region.y:region.bottom]]


def painted_text(app, selector: str) -> list[str]:
    """The rows of a pane's text as painted now, its border, padding and scrollbar cut off
    ([] while it is hidden)."""
    widget = app.screen.query_one(selector)
    if not widget.display or not widget.region:
        return []
    box = widget.scrollable_content_region
    return [row[box.x:box.right].rstrip() for row in screen_rows(app)[box.y:box.bottom]]


async def settled_text(app, pilot, selector: str) -> list[str]:
    """``painted_text`` once the pane has placed what it shows: a lesson page scrolls to its
    part a refresh after it was drawn (``LessonPage.placed`` says when), and the screen is
    then painted again before it is read."""
    widget = app.screen.query_one(selector)
    await wait_until(pilot, lambda: getattr(widget, "placed", True))
    await pilot.wait_for_scheduled_animations()
    return painted_text(app, selector)


def dock_shown(app) -> bool:
    """A lesson's prediction is docked on screen (its border title is painted)."""
    return any("predict, then watch" in row for row in screen_rows(app))


async def answer_docked(app, pilot, right: bool = True) -> None:
    """Answer the prediction docked on screen as a learner does: an option by its letter,
    a free answer typed (the right one, or one more than it)."""
    predict = app.screen.walk.waiting
    if predict.choices:
        wanted = predict.answer if right else next(c for c in predict.choices if c != predict.answer)
        await pilot.press("abcdefgh"[predict.choices.index(wanted)])
        return
    reply = predict.answer
    if not right:
        reply = str(int(reply.split()[0]) + 1) if reply.split()[0].lstrip("-").isdigit() else "zz"
    names = {" ": "space", "-": "minus", '"': "quotation_mark", ",": "comma", "_": "underscore"}
    await pilot.press(*[names.get(ch, ch) for ch in reply], "enter")


async def walk_until(app, pilot, condition, key: str = "right", docked: str = "escape",
                     limit: int = 400) -> None:
    """Walk a lesson, pressing ``key`` (and ``docked`` while a prediction is docked: "escape"
    skips it, "answer" answers it right) until ``condition()`` holds; fail after ``limit``."""
    import pytest
    for _ in range(limit):
        if condition():
            return
        if dock_shown(app):
            await (answer_docked(app, pilot) if docked == "answer" else pilot.press(docked))
        else:
            await pilot.press(key)
    pytest.fail("the lesson never reached the state the test walks to")


def shows(app, text: str, selector: str) -> bool:
    """Whether the widget ``selector`` paints ``text``, wrapped over its rows or not
    (whitespace is ignored: a wrap turns a space into a line break)."""
    painted = "".join(pane_rows(app, selector))
    return "".join(text.split()) in "".join(painted.split())
