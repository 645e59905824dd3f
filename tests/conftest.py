"""Shared set-up of the test suite.

- Every test keeps the learner's progress in its own folder, never in the real data dir.
- Markers are given here, by file and test name, so a new test file needs no decorators:
  ``tui`` (drives the app with Pilot or compares snapshots), ``browser`` (headless Chromium),
  ``slow`` (over a few seconds even on a quiet machine). ``scripts/test.sh --fast`` leaves out
  ``slow`` and ``browser``; ``pytest -m tui`` runs the app tests alone.
- Pilot waits for the app to go idle with shorter slices (see ``_quicker_pilot``).
"""
from __future__ import annotations

import inspect

import pytest

# Tests that take seconds because of what they check (a long random walk, every lesson
# played in the app, twenty served sessions, a page for every step). Matched against the
# test's node id: "file.py" (every test in it), "file.py::name" (a test, its parameters too).
SLOW = (
    "test_tui_monkey.py",
    "test_tui_scheduler.py::test_random_keys_never_crash",
    "test_lessons_played.py::test_app_grades_every_right_answer_right_and_records_the_lesson",
    "test_lessons_played.py::test_app_grades_every_wrong_answer_wrong",
    "test_serve_load.py",
    "test_kv_sim.py::test_generated_text_equals_generation_without_a_cache",
)


def _matches(nodeid: str, pattern: str) -> bool:
    path, _, name = nodeid.partition("::")
    file, _, test = pattern.partition("::")
    if path.rsplit("/", 1)[-1] != file:
        return False
    return not test or name == test or name.startswith((test + "[", test + "::")) \
        or ("::" + test) in ("::" + name)


def _is_tui(item) -> bool:
    function = getattr(item, "function", None)
    return (item.path.name.startswith("test_tui_")
            or "snap_compare" in getattr(item, "fixturenames", ())
            or (function is not None and inspect.iscoroutinefunction(function)))


def pytest_configure(config) -> None:
    for line in ("tui: drives the Textual app (Pilot) or compares its snapshots",
                 "browser: drives headless Chromium (skipped without it)",
                 "slow: takes seconds on purpose; scripts/test.sh --fast leaves it out"):
        config.addinivalue_line("markers", line)


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.path.name.startswith("test_browser_"):
            item.add_marker(pytest.mark.browser)
            # one worker runs them all, one after another (under --dist loadgroup): one
            # Chromium at a time, and the module's browser fixture is started once
            item.add_marker(pytest.mark.xdist_group("browser"))
        if _is_tui(item):
            item.add_marker(pytest.mark.tui)
        if any(_matches(item.nodeid, pattern) for pattern in SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _private_progress(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path_factory.mktemp("radixviz-data")))


@pytest.fixture(autouse=True, scope="session")
def _quicker_pilot():
    """Pilot waits after every key until the process looks idle, probing in slices of 20 ms
    (Textual's default): three slices a key, most of a TUI test's time asleep. Slices of
    5 ms with the screen's repaint timer at 250 Hz (it must fire inside a slice, or a probe
    could end before the repaint) keep the same meaning at a quarter of the wait."""
    import textual._wait as wait
    import textual.screen as screen

    saved = wait.SLEEP_GRANULARITY, wait.SLEEP_IDLE, screen.UPDATE_PERIOD
    wait.SLEEP_GRANULARITY = 1 / 200
    wait.SLEEP_IDLE = wait.SLEEP_GRANULARITY / 20
    screen.UPDATE_PERIOD = 1 / 250
    yield
    wait.SLEEP_GRANULARITY, wait.SLEEP_IDLE, screen.UPDATE_PERIOD = saved
