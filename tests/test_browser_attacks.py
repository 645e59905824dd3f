"""A served session from a real browser tab (headless Chromium), as a student and as an
attacker's page: a save reaches the student's browser as a download and writes nothing the
tab names on the teacher's machine; a page on another origin, even with the student's
cookies and a real ticket, gets no session and no student. The teacher's files (a fake
HOME) are compared before and after, and never reach a tab."""
from __future__ import annotations

import html
import http.server
import re
import threading

import pytest

from browser_helpers import browser  # noqa: F401 - a fixture
from serve_helpers import SECRET, load, start, teacher_home
from test_browser_serve import KEEP_TEXT, WAIT_MS, drawn, join, raw_length, wait_drawn, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    teacher = teacher_home(tmp_path_factory.mktemp("class"))
    before = teacher.files()
    proc, url = start(teacher, 3)
    yield teacher, proc, url
    load.stop_server(proc)
    assert teacher.files() == before, "a tab changed the teacher's files"


OPENED = "window.__opened = []; window.open = (address) => { window.__opened.push(address); return null; };"


def student_tab(browser, url, name):  # noqa: F811
    context = browser.new_context(viewport={"width": 1200, "height": 760}, accept_downloads=True)
    context.add_init_script(KEEP_TEXT)
    context.add_init_script(OPENED)
    page = context.new_page()
    page.goto(url)
    join(page, name)
    wait_drawn(page, load.HOME_MARK)
    page.locator(".xterm-helper-textarea").focus()
    return context, page


def press_after_repaint(page, key: str) -> None:
    """Press ``key`` once the app has drawn something since the last key (an ESC followed
    at once by other bytes would read as alt+key)."""
    mark = raw_length(page)
    page.keyboard.press(key)
    wait_for(page, "(m) => window.__drawn.length > m", mark, "repainted")


def test_a_save_is_a_download_in_the_students_browser(browser, classroom):  # noqa: F811
    teacher, _proc, url = classroom
    context, page = student_tab(browser, url, "Ada")
    try:
        page.keyboard.press("s")
        wait_drawn(page, "no steps yet")
        page.keyboard.press(":")
        page.keyboard.type('insert "$(touch ~/pwned)"')
        mark = raw_length(page)
        page.keyboard.press("Enter")
        wait_drawn(page, "step 1/", after=mark)
        press_after_repaint(page, "Escape")
        mark = raw_length(page)
        page.keyboard.press("Control+s")
        wait_drawn(page, "Save the session", after=mark)
        page.keyboard.press("Control+a")
        page.keyboard.press("Control+k")
        page.keyboard.type("~/.bashrc")
        page.keyboard.press("Enter")
        # the page opens the download's address (window.open, kept by OPENED); this browser
        # fetches it with its own cookies, as the new tab would
        wait_for(page, "() => window.__opened.length > 0", what="a download opened")
        address = page.evaluate("() => window.__opened[0]")
        assert address.startswith(url.rstrip("/") + "/download/")
        other = browser.new_context()           # another browser (student) gets nothing
        assert other.request.get(address).status == 404
        other.close()
        response = context.request.get(address)
        assert response.status == 200
        assert response.headers["content-disposition"] == "attachment; filename=bashrc.rv"
        assert response.text() == '# saved from the radixviz sandbox\ninsert "$(touch ~/pwned)"\n'
        assert not (teacher.home / "pwned").exists()
        assert SECRET not in drawn(page)
    finally:
        context.close()


EVIL_PAGE = """<!DOCTYPE html><html><body><script>
window.__result = {};
(async () => {
  try {
    await fetch("%(base)s/join", {method: "POST", mode: "no-cors", body: new URLSearchParams({name: "Mallory"})});
    window.__result.join = "sent";
  } catch (error) { window.__result.join = "failed"; }
  const socket = new WebSocket("%(ws)s");
  socket.onopen = () => { window.__result.socket = "opened"; };
  socket.onclose = () => { window.__result.socket = window.__result.socket || "refused"; };
})();
</script></body></html>"""


def test_a_page_on_another_origin_gets_no_session(browser, classroom):  # noqa: F811
    teacher, proc, url = classroom
    context, _page = student_tab(browser, url, "Bea")
    base = url.rstrip("/")
    try:
        # a real, unused ticket of Bea's: her own page holds it; the attacker learned it somehow.
        # The page is fetched with her cookies but not opened, so no app starts for it
        page_text = context.request.get(url).text()
        ws_url = html.unescape(re.search(r'data-session-websocket-url="([^"]+)"', page_text).group(1))

        class Evil(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = (EVIL_PAGE % {"base": base, "ws": ws_url}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass
        evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
        threading.Thread(target=evil.serve_forever, daemon=True).start()
        try:
            # same site as the classroom (127.0.0.1, another port), so Bea's cookies go along
            attacker = context.new_page()
            attacker.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
            attacker.wait_for_function("() => window.__result.socket && window.__result.join", timeout=WAIT_MS)
            result = attacker.evaluate("() => window.__result")
        finally:
            evil.shutdown()
        assert result["socket"] == "refused"
        names = [s.name for s in load_roster(teacher)]
        assert "Mallory" not in names and names.count("Bea") == 1
        assert len(load.children(proc.pid)) == 1          # only Bea's own tab
    finally:
        context.close()


def load_roster(teacher):
    from radixviz.classroom.students import Roster
    return Roster(teacher.classroom).students()
