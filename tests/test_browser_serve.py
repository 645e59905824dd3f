"""``radixviz serve`` in headless Chromium: a student joins by name, the home screen paints,
keys reach the app, each tab is its own session, a tab past the cap is told the class is
full, and closing tabs ends their processes. Only 127.0.0.1 is used.

What the app draws is read from the websocket inside the page (the terminal itself paints on
a canvas): a script added before the page's own wraps WebSocket and keeps the text received.
"""
import time

import pytest

from browser_helpers import browser  # noqa: F401 - a fixture
from serve_helpers import load, start, teacher_home

pytestmark = [pytest.mark.slow, pytest.mark.browser]
PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError

WAIT_MS = 90_000          # an app process starts in a second or two; the machine may be busy
KEEP_TEXT = """
(() => {
  const Native = window.WebSocket;
  window.__drawn = "";
  window.WebSocket = function (url, protocols) {
    const socket = new Native(url, protocols);
    const decoder = new TextDecoder();
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") window.__drawn += decoder.decode(event.data, {stream: true});
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, {OPEN: 1, CLOSED: 3, CONNECTING: 0, CLOSING: 2});
})();
"""


def drawn(page) -> str:
    """Everything the app has drawn in this tab, escape sequences removed."""
    return load.ANSI.sub("", page.evaluate("() => window.__drawn"))


def wait_drawn(page, needle: str, after: int = 0) -> None:
    """Wait until ``needle`` is drawn (after the first ``after`` characters of the raw stream)."""
    wait_for(page, "([needle, after, pattern]) => "
             "window.__drawn.slice(after).replace(new RegExp(pattern, 'g'), '').includes(needle)",
             [needle, after, load.ANSI.pattern.replace("\\x07", "\\u0007").replace("\\x1b", "\\u001b")],
             what=f"{needle!r} drawn")


def wait_for(page, expression: str, arg=None, what: str = "") -> None:
    """Wait until ``expression`` holds in the page; if it never does, fail showing the end of
    what the tab was drawn (the screen the person would have been looking at)."""
    try:
        page.wait_for_function(expression, arg=arg, timeout=WAIT_MS, polling=200)
    except PlaywrightTimeout:
        tail = " ".join(drawn(page)[-1500:].split())
        raise AssertionError(f"not {what or expression} in {WAIT_MS // 1000} s; the tab's last text: "
                             f"{tail}") from None


def raw_length(page) -> int:
    return page.evaluate("() => window.__drawn.length")


def join(page, name: str) -> None:
    """Type a name on the join page, then start the app from the welcome page."""
    page.fill("input[name=name]", name)
    page.click("button[type=submit]")
    page.wait_for_selector("text=Welcome")
    page.click("text=Start radixviz")


def new_tab(browser, url, name: str | None = None, context=None):  # noqa: F811
    """A tab of a new browser (a new student, who joins by ``name``), or of ``context``."""
    if context is None:
        context = browser.new_context(viewport={"width": 1200, "height": 760}, accept_downloads=True)
        context.add_init_script(KEEP_TEXT)
    page = context.new_page()
    page.goto(url)
    if name is not None:
        join(page, name)
    return context, page


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A class of 2, served as the teacher runs it, with a fake HOME."""
    teacher = teacher_home(tmp_path_factory.mktemp("class"))
    proc, url = start(teacher, 2)
    yield proc, url
    load.stop_server(proc)


def wait_for_processes(proc, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(load.children(proc.pid)) != count:
        assert time.monotonic() < deadline, f"{len(load.children(proc.pid))} app processes, expected {count}"
        time.sleep(0.2)


class TestServedApp:
    def test_home_paints_keys_reach_the_app_and_tabs_are_independent(self, browser, server):  # noqa: F811
        proc, url = server
        first_context, first = new_tab(browser, url, "Ada")
        wait_drawn(first, load.HOME_MARK)
        assert first.title() == "radixviz · Ada"
        # the terminal is on screen, not the "starting" card
        assert first.locator("#terminal canvas").first.is_visible()
        assert not first.locator(".intro-dialog").is_visible()

        # open the sandbox, type an operation, step on: the stepper's status line counts the steps
        first.locator(".xterm-helper-textarea").focus()   # a click would land on a menu entry
        first.keyboard.press("s")
        wait_drawn(first, "no steps yet")
        first.keyboard.press(":")
        first.keyboard.type('insert "abc"')
        mark = raw_length(first)
        first.keyboard.press("Enter")
        wait_drawn(first, "step 1/", after=mark)
        # the input stays open for more operations until esc; wait for the repaint that closes
        # it, or the arrow's bytes would follow the escape at once and read as alt+right
        mark = raw_length(first)
        first.keyboard.press("Escape")
        wait_for(first, "(m) => window.__drawn.length > m", mark, "repainted")
        mark = raw_length(first)
        first.keyboard.press("ArrowRight")
        wait_drawn(first, "step 2/", after=mark)

        # a second tab is its own session: the home screen, none of the first tab's work
        second_context, second = new_tab(browser, url, "Bob")
        wait_drawn(second, load.HOME_MARK)
        assert "abc" in drawn(first) and "abc" not in drawn(second)
        wait_for_processes(proc, 2)

        # a third tab passes the cap of 2: a clear page at once, not a session that never starts
        third_context = browser.new_context()
        third = third_context.new_page()
        third.goto(url)
        join(third, "Cy")
        third.wait_for_selector("h1")
        assert third.locator("h1").inner_text() == "The class is full"
        third_context.close()

        # closing the tabs ends their app processes; then the class has room again
        first_context.close()
        second_context.close()
        wait_for_processes(proc, 0)
        again_context, again = new_tab(browser, url, "Dee")
        wait_drawn(again, load.HOME_MARK)
        again_context.close()
        wait_for_processes(proc, 0)

    def test_the_page_fetches_nothing_from_the_internet(self, browser, server):  # noqa: F811
        proc, url = server
        context = browser.new_context()
        context.add_init_script(KEEP_TEXT)
        page = context.new_page()
        requested = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(url)
        join(page, "Eli")
        wait_drawn(page, load.HOME_MARK)
        context.close()
        assert requested and all(u.startswith(url) or u.startswith(url.replace("http", "ws")) for u in requested)
        wait_for_processes(proc, 0)
