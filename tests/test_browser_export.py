"""The exported page in headless Chromium, opened from a file as a teacher would open it."""
import json
import re
import shutil

import pytest

from radixviz.cli import main

from browser_helpers import browser  # noqa: F401 - a fixture

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot not installed")

CHAPTER = 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match "Hello_world"'


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    target = tmp_path_factory.mktemp("export") / "steps.html"
    with pytest.raises(SystemExit) as info:
        main(["export", "--device", "cpu", "--buggy", "-e", CHAPTER, "-o", str(target)])
    assert info.value.code == 0
    return target


@pytest.fixture
def tab(browser):  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.requests = requests
    yield page
    context.close()


def shown(page) -> dict:
    """What a reader sees: the step counter, the visible section's number and its tree's text."""
    return page.evaluate("""() => {
        const section = document.querySelector('section.step.current');
        return {counter: document.getElementById('step-number').textContent,
                step: section && section.dataset.step,
                visible: [...document.querySelectorAll('section.step')].filter(s => s.offsetParent !== null).length,
                tree: section && section.querySelector('svg').textContent.replace(/\\s+/g, ' '),
                hash: location.hash};
    }""")


class TestExportedPage:
    def test_opens_from_disk_at_step_one(self, tab, page_file):
        tab.goto(page_file.as_uri())
        now = shown(tab)
        assert (now["counter"], now["step"], now["visible"], now["hash"]) == ("1", "1", 1, "#step-1")

    def test_arrow_advances_the_step_and_changes_the_tree(self, tab, page_file):
        tab.goto(page_file.as_uri() + "#step-4")
        before = shown(tab)
        tab.keyboard.press("ArrowRight")
        after = shown(tab)
        assert (after["counter"], after["hash"]) == ("5", "#step-5")
        assert after["tree"] != before["tree"]
        tab.keyboard.press("ArrowLeft")
        assert shown(tab)["tree"] == before["tree"]

    def test_fragment_link_opens_at_that_step(self, tab, page_file):
        total = int(re.findall(r'data-step="(\d+)"', page_file.read_text(encoding="utf-8"))[-1])
        tab.goto(page_file.as_uri() + f"#step-{total}")
        now = shown(tab)
        assert (now["counter"], now["step"]) == (str(total), str(total))
        assert "✗ 'world'" in now["tree"]          # the last step: the buggy match took 'world'

    def test_slider_and_buttons(self, tab, page_file):
        tab.goto(page_file.as_uri())
        tab.locator("#slider").fill("10")
        assert shown(tab)["counter"] == "10"
        tab.click("#next")
        assert shown(tab)["counter"] == "11"

    def test_no_network_request(self, tab, page_file):
        blocked = []

        def refuse(route):
            blocked.append(route.request.url)
            route.abort()
        tab.route(re.compile(r"^(https?|wss?|ftp)://"), refuse)
        tab.goto(page_file.as_uri() + "#step-3")
        for _ in range(5):
            tab.keyboard.press("ArrowRight")
        tab.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
        assert blocked == []
        assert tab.requests == [page_file.as_uri() + "#step-3"] or all(u.startswith("file:") for u in tab.requests)
        assert len(tab.requests) == 1

    def test_print_puts_one_step_per_page(self, tab, page_file):
        tab.goto(page_file.as_uri())
        tab.emulate_media(media="print")
        visible = shown(tab)["visible"]
        breaks = tab.evaluate("() => getComputedStyle(document.querySelector('section.step')).breakAfter")
        assert visible == len(re.findall(r'<section class="step"', page_file.read_text(encoding="utf-8")))
        assert breaks == "page"

    def test_stepping_time(self, tab, page_file, record_property):
        """Time from the key to the new step laid out, over every step: reported (JSON on stdout
        and as a junit property), not asserted; speed is judged in benchmarks, where a loaded
        machine cannot turn a correct page into a failed test."""
        tab.goto(page_file.as_uri())
        timings = tab.evaluate("""() => {
            const times = [];
            const total = document.querySelectorAll('section.step').length;
            for (let i = 1; i < total; i++) {
                const t0 = performance.now();
                document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
                document.querySelector('section.step.current svg').getBoundingClientRect();
                times.push(performance.now() - t0);
            }
            return times;
        }""")
        mean = sum(timings) / len(timings)
        record_property("step_ms_mean", round(mean, 2))
        print(json.dumps({"browser_step_ms": {"mean": round(mean, 2), "max": round(max(timings), 2),
                                              "steps": len(timings)}}))
        assert shown(tab)["counter"] == str(len(timings) + 1)
