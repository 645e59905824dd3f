"""The served app and the teacher's report in headless Chromium (issues 51 and 53), on
127.0.0.1: the app's page runs under its Content-Security-Policy with nothing refused; the
click that gives the terminal the focus only gives it the focus (it used to open the menu
entry under the pointer); the footer's palette key opens nothing from a click (ctrl+p does);
and the class report, made for a projector, shows 30 students at 1920×1080, one row each,
with where each one is now."""
from __future__ import annotations

import json
import re

import pytest

from browser_helpers import browser  # noqa: F401 - a fixture
from serve_attack_helpers import teacher_key
from serve_helpers import load, start, teacher_home
from test_browser_serve import KEEP_TEXT, join, raw_length, wait_drawn

from radixviz.classroom.students import Roster
from radixviz.lessons import load_lessons

pytestmark = [pytest.mark.slow, pytest.mark.browser]
PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError
# the size the page asks its terminal for, kept as the page sends it
KEEP_SIZE = """
(() => {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (typeof data === "string" && data.startsWith('["resize"')) window.__size = JSON.parse(data)[1];
    return send.call(this, data);
  };
})();
"""
CURSOR = re.compile(r"\x1b\[(\d+);(\d+)H")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    teacher = teacher_home(tmp_path_factory.mktemp("class"))
    proc, url = start(teacher, 3)
    yield teacher, proc, url
    load.stop_server(proc)


def student_tab(browser, url: str, name: str, refused: list | None = None):  # noqa: F811
    context = browser.new_context(viewport={"width": 1200, "height": 760})
    context.add_init_script(KEEP_TEXT)
    context.add_init_script(KEEP_SIZE)
    page = context.new_page()
    if refused is not None:
        page.on("console", lambda message: refused.append(message.text)
                if "Content Security Policy" in message.text else None)
    page.goto(url)
    join(page, name)
    wait_drawn(page, load.HOME_MARK)
    return context, page


def cell_of(page, needle: str) -> tuple[int, int]:
    """(row, column), from 1, where the app last drew ``needle``: the cursor move before it
    in the raw stream, plus the characters drawn between them."""
    raw = page.evaluate("() => window.__drawn")
    at = raw.rindex(needle)
    moves = list(CURSOR.finditer(raw, 0, at))
    move = moves[-1]
    between = load.ANSI.sub("", raw[move.end():at])
    return int(move.group(1)), int(move.group(2)) + len(between)


def click_cell(page, row: int, column: int) -> None:
    """A mouse click in the middle of one cell of the terminal."""
    size = page.evaluate("() => window.__size")
    box = page.locator(".xterm-screen").bounding_box()
    width, height = box["width"] / size["width"], box["height"] / size["height"]
    page.mouse.click(box["x"] + (column - 0.5) * width, box["y"] + (row - 0.5) * height)


def nothing_drawn_with(page, needle: str, after: int, seconds: float = 2.0) -> bool:
    page.wait_for_timeout(seconds * 1000)
    return needle not in load.ANSI.sub("", page.evaluate("() => window.__drawn")[after:])


class TestTheServedPage:
    def test_the_first_click_only_focuses_the_terminal_under_the_pages_policy(self, browser, server):  # noqa: F811
        _, _, url = server
        refused: list = []          # what the Content-Security-Policy blocked: nothing may be
        context, page = student_tab(browser, url, "Ada", refused)
        try:
            row, column = cell_of(page, load.HOME_MARK)
            # the page as it opens: the terminal has not had the focus yet
            assert not page.evaluate("() => document.activeElement.className").startswith("xterm")
            mark = raw_length(page)
            click_cell(page, row, column + 3)            # on "Sandbox: an empty cache"
            # the sandbox's first paint, at once, while its engine loads
            assert nothing_drawn_with(page, "loading the engine", mark), "the focusing click opened the sandbox"
            assert page.evaluate("() => document.activeElement.className").startswith("xterm-helper-textarea")
            click_cell(page, row, column + 3)            # now a click acts
            wait_drawn(page, "no steps yet", after=mark)
        finally:
            context.close()
        assert refused == []

    def test_the_palette_opens_from_the_keyboard_not_from_a_click(self, browser, server):  # noqa: F811
        _, _, url = server
        context, page = student_tab(browser, url, "Bea")
        try:
            page.locator(".xterm-helper-textarea").focus()
            row, column = cell_of(page, "palette")           # the footer's "^p palette"
            mark = raw_length(page)
            click_cell(page, row, column + 2)
            wait_drawn(page, "ctrl+p opens the command palette", after=mark)
            assert nothing_drawn_with(page, "Search for commands", mark, 1.0)
            page.keyboard.press("Control+p")
            wait_drawn(page, "Search for commands", after=mark)
        finally:
            context.close()


class TestTheReport:
    def test_thirty_students_fit_a_projector_with_where_each_is(self, browser, server, tmp_path):  # noqa: F811
        teacher, proc, url = server
        roster = Roster(teacher.classroom)
        students = [roster.join(f"Student {n:02d} Longername") for n in range(1, 31)]
        lesson = load_lessons()[0]
        (roster.home(students[0]) / "progress.json").write_text(json.dumps({
            "version": 1, "lessons": {}, "positions": {lesson.id: {
                "block": 3, "predicted": [1, 1], "of": 3, "when": "2026-12-07T10:00:00Z"}}}))
        key = teacher_key(proc)
        context = browser.new_context(viewport={"width": 1920, "height": 1080})
        page = context.new_page()
        try:
            page.goto(f"{url}/teacher?key={key}")
            page.wait_for_selector("table.students")
            page.screenshot(path=str(tmp_path / "report-1920x1080.png"))
            rows = page.locator("tr.student")
            in_view = [box for box in (rows.nth(i).bounding_box() for i in range(rows.count()))
                       if box and box["y"] >= 0 and box["y"] + box["height"] <= 1080]
            assert len(in_view) >= 30, f"{len(in_view)} of {rows.count()} student rows in view"
            assert max(box["height"] for box in in_view) < 40          # one line each
            first = rows.filter(has_text="Student 01").inner_text()
            assert f"lesson {lesson.number} · prediction 2 of 3" in first
            assert not page.locator("details.limits p").is_visible()      # the limits folded away
            assert not page.locator("details.actions code").first.is_visible()   # links behind a button
            rows.first.locator("details.actions summary").click()
            assert page.locator("details.actions code").first.is_visible()
        finally:
            context.close()
