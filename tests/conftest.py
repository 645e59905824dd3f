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
import sys
from pathlib import Path

import pytest

# Tests that take seconds because of what they check: a long random walk, every lesson
# played in the app, twenty served sessions, or a fresh Python that imports torch (1-2 s of
# CPU each: the command line as a person runs it, import-order checks, first paint).
# Matched against the test's node id: "file.py" (every test in it), "file.py::name" (that
# test, its parameters too), "file.py::Class" (a class of tests).
SLOW = (
    # long walks
    "test_tui_monkey.py",
    "test_tui_scheduler.py::test_random_keys_never_crash",
    "test_lessons_played.py::test_app_grades_every_right_answer_right_and_records_the_lesson",
    "test_lessons_played.py::test_app_grades_every_wrong_answer_wrong",
    "test_serve_load.py",
    "test_kv_sim.py::test_generated_text_equals_generation_without_a_cache",
    # randomised sweeps against a reference, pass by pass or step by step
    "test_hicache_sim.py::test_every_pass_keeps_both_tiers_consistent",
    "test_hicache_differential.py::test_engine_matches_reference_step_by_step",
    "test_sim_scheduler.py::TestSlotsConserved",
    "test_modern_sim.py::test_every_pass_keeps_tree_and_pool_consistent",
    "test_cache_stateful.py::TestCacheAgainstReference",
    "test_modern_differential.py::test_long_seeded_run_matches_reference",
    # a fresh interpreter with torch
    "test_quiz_plain.py",
    "test_run_compiled.py",
    "test_cli.py::TestOneLessonLookup::test_read_takes_a_leading_zero_too",
    "test_cli.py::test_a_closed_pipe_stops_quietly",
    "test_lessons_format.py::test_check_command_exit_codes",
    "test_lessons_played.py::test_read_on_the_command_line_takes_the_letter_of_an_option",
    "test_lessons_wheel.py",
    "test_progress_store.py::TestCommand::test_reading_a_lesson_marks_it_completed",
    "test_progress_store.py::test_reading_a_lesson_when_progress_cannot_be_saved_says_so_without_a_traceback",
    "test_cache_pool_invariants.py::test_importing_the_engine_loads_no_ui_library",
    "test_sim_scheduler.py::test_the_simulation_loads_no_ui_library",
    "test_tui_scheduler.py::test_first_paint_does_not_wait_for_torch",
    "test_tui_stepping.py::TestFirstPaint",
    "test_first_paint.py",
)


# The longest files are handed out first, so that no worker starts one of them while the
# others have nothing left to do (with them last, the run waited up to a minute on one worker).
# Whole files move, in their own order, so a module's fixtures are still set up once.
LONGEST_FIRST = ("test_lesson_painted.py", "test_browser_", "test_tui_monkey.py", "test_sim_speedups.py",
                 "test_serve_load.py", "test_serve_security.py", "test_serve_students.py")


def _matches(nodeid: str, pattern: str) -> bool:
    path, _, name = nodeid.partition("::")
    file, _, test = pattern.partition("::")
    if path.rsplit("/", 1)[-1] != file:
        return False
    return not test or name == test or name.startswith((test + "[", test + "::"))


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


# each over a second, measured (the file says how): --fast is the loop of the quick ones
MEASURED_SLOW = frozenset(
    line.strip() for line in (Path(__file__).with_name("slow_measured.txt")).read_text().splitlines()
    if line.strip() and not line.startswith("#"))


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.path.name.startswith("test_browser_"):
            item.add_marker(pytest.mark.browser)
            # one worker runs them all, one after another (under --dist loadgroup): one
            # Chromium at a time, and the module's browser fixture is started once
            item.add_marker(pytest.mark.xdist_group("browser"))
        if _is_tui(item):
            item.add_marker(pytest.mark.tui)
        if item.nodeid in MEASURED_SLOW or any(_matches(item.nodeid, pattern) for pattern in SLOW):
            item.add_marker(pytest.mark.slow)
    items.sort(key=_hand_out_order)


def _hand_out_order(item) -> int:
    name = item.path.name
    return next((rank for rank, start in enumerate(LONGEST_FIRST) if name.startswith(start)),
                len(LONGEST_FIRST))


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
    # idle: under 5% of a slice on the CPU. A trace function (testmon's coverage under
    # --changed) makes every line of Textual and asyncio cost more: an idle app's slice then
    # takes 0.3-0.4 ms of CPU instead of 0.1-0.3, over the 0.25 ms mark, and each wait ran on
    # for slice after slice (20 stepping/screen-size tests: 276 slices untraced, 758-1,032
    # traced, 28 s wall instead of 20). Traced, 10% of a slice marks idle; untraced, as before.
    wait.SLEEP_IDLE = wait.SLEEP_GRANULARITY / (10 if sys.gettrace() else 20)
    screen.UPDATE_PERIOD = 1 / 250
    yield
    wait.SLEEP_GRANULARITY, wait.SLEEP_IDLE, screen.UPDATE_PERIOD = saved


class Cli:
    """``radixviz ARGV`` for a test: ``cli("run", "-e", "insert a")`` runs it in this process
    and returns (exit code, stdout, stderr); ``cli.process(...)`` runs it in a fresh Python
    (a subprocess.CompletedProcess); ``cli.bound("simulate")`` is a Cli that puts those words
    first (a test file's usual command)."""

    def __init__(self, capsys, head: tuple = ()):
        self.capsys, self.head = capsys, head

    def __call__(self, *argv) -> tuple:
        from radixviz.cli import main   # the package, once a test asks for the command line

        with pytest.raises(SystemExit) as info:
            main([*self.head, *map(str, argv)])
        out, err = self.capsys.readouterr()
        return info.value.code, out, err

    def bound(self, *head: str) -> Cli:
        return Cli(self.capsys, (*self.head, *head))

    def process(self, *argv, stdin: str | None = None, env: dict | None = None, timeout: float = 120):
        import subprocess
        import sys

        return subprocess.run([sys.executable, "-m", "radixviz", *self.head, *map(str, argv)],
                              input=stdin, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture
def cli(capsys) -> Cli:
    """The command line, in this process or a fresh one (``Cli``)."""
    return Cli(capsys)
