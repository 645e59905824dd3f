"""Login CSRF, from headless Chromium: a page on another origin (another port of
127.0.0.1: the same site, so the student's Lax cookies go along) sends the student's
browser to ``/?student=<the attacker's key>``, by an ``<img>`` and by a top-level
navigation, and posts a confirmation token it fetched itself. The student stays who they
were; the page they land on asks "Continue as Mallory?". A link the student opens
themselves binds a new browser at once; the confirmation's button switches one."""
from __future__ import annotations

import http.server
import re
import threading
import urllib.parse
import urllib.request

import pytest

from browser_helpers import browser  # noqa: F401 - a fixture
from serve_attack_helpers import roster
from serve_helpers import load, start, teacher_home

pytestmark = [pytest.mark.slow, pytest.mark.browser]
WAIT_MS = 60_000
EVIL_PAGE = """<!DOCTYPE html><html><body>
<img src="%(link)s">
<form id="f" method="post" action="%(base)s/link"><input name="token" value="%(token)s"></form>
<script>
const step = new URLSearchParams(location.search).get("step");
if (step === "post") document.getElementById("f").submit();
else setTimeout(() => { location.href = "%(link)s"; }, 300);
</script></body></html>"""


def student_cookie(context) -> str | None:
    return next((c["value"] for c in context.cookies() if c["name"] == "radixviz_student"), None)


def mallory_and_a_token(base: str, classroom) -> tuple[str, str]:
    """Mallory joins from a cookie-less client and fetches a confirmation page of her own."""
    form = urllib.parse.urlencode({"name": "Mallory"}).encode()
    urllib.request.urlopen(urllib.request.Request(f"{base}/join", data=form, headers={"Origin": base}), timeout=60)
    key = next(k for k, name in roster(classroom).items() if name == "Mallory")
    with urllib.request.urlopen(f"{base}/?student={key}", timeout=60) as response:
        token = re.search(r'name="token" value="([^"]+)"', response.read().decode()).group(1)
    return key, token


def evil_server(page_text: str):
    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = page_text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_another_origin_cannot_swap_the_students_identity(browser, tmp_path):  # noqa: F811
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2)
    mallory, token = mallory_and_a_token(base, teacher.classroom)
    link = f"{base}/?student={mallory}"
    evil = evil_server(EVIL_PAGE % {"link": link, "base": base, "token": token})
    evil_url = f"http://127.0.0.1:{evil.server_address[1]}/"
    victim = browser.new_context()
    fresh = browser.new_context()
    try:
        tab = victim.new_page()
        tab.goto(base + "/")
        tab.fill("input[name=name]", "Bea")
        tab.click("button[type=submit]")
        tab.wait_for_selector("text=Welcome")
        bea = student_cookie(victim)
        assert bea and bea != mallory

        # the attacker's page: an <img>, then a navigation to Mallory's link
        tab.goto(evil_url)
        tab.wait_for_url(link, timeout=WAIT_MS)
        tab.wait_for_selector("text=You are Bea on this browser", timeout=WAIT_MS)
        assert "Continue as Mallory" in tab.content()
        assert student_cookie(victim) == bea
        # and a form it posts with a token it fetched itself: refused (another origin)
        tab.goto(evil_url + "?step=post")
        tab.wait_for_url(f"{base}/link", timeout=WAIT_MS)
        assert "Refused" in tab.content() and student_cookie(victim) == bea

        # a browser with no student yet, sent by the attacker: asked, not bound
        other = fresh.new_page()
        other.goto(evil_url)
        other.wait_for_url(link, timeout=WAIT_MS)
        other.wait_for_selector("text=Continue as Mallory?", timeout=WAIT_MS)
        assert student_cookie(fresh) is None

        # Bea herself chooses to continue as Mallory on the page: the button works
        tab.goto(link)                                  # as if she pasted it: still asked (she is Bea)
        tab.wait_for_selector("text=You are Bea on this browser", timeout=WAIT_MS)
        tab.route("**/ws/**", lambda route: route.abort())   # no app session needed
        tab.click("button:has-text('Continue as Mallory')")
        tab.wait_for_url(base + "/", timeout=WAIT_MS)
        assert student_cookie(victim) == mallory
    finally:
        victim.close()
        fresh.close()
        evil.shutdown()
        load.stop_server(proc)


def test_a_link_the_student_opens_binds_a_new_browser(browser, tmp_path):  # noqa: F811
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2)
    mallory, _ = mallory_and_a_token(base, teacher.classroom)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.route("**/ws/**", lambda route: route.abort())
        page.goto(f"{base}/?student={mallory}")            # typed or pasted: Sec-Fetch-Site none
        page.wait_for_url(base + "/", timeout=WAIT_MS)
        assert student_cookie(context) == mallory
    finally:
        context.close()
        load.stop_server(proc)
