"""A damaged, unreadable or shared progress file: every good record kept, the damage named,
unreadable files left alone, nothing hangs, and concurrent writers all keep their records."""
import builtins
import json
import os
import subprocess
import sys
import time

import pytest

from radixviz.lessons.progress import Progress, update_progress


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def cli(cli):
    """``radixviz ARGS`` in a fresh Python that keeps its progress in ``data_dir``."""
    def run(*args, data_dir, timeout=60):
        return cli.process(*args, timeout=timeout,
                           env={"RADIXVIZ_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"})
    return run


def write(data_dir, document) -> str:
    text = document if isinstance(document, str) else json.dumps(document)
    (data_dir / "progress.json").write_text(text, encoding="utf-8")
    return text


GOOD_LESSON = {"completed": "2026-01-02T03:04:05Z", "title": "Eviction", "predicted": [2, 3]}
GOOD_SCORE = {"when": "2026-01-02T03:04:05Z", "score": 4, "total": 6, "difficulty": "hard"}


class TestOneBadRecord:
    def test_the_other_records_are_kept_and_the_bad_one_named(self, data_dir):
        write(data_dir, {"version": 1,
                         "lessons": {"the-node": {"predicted": "x"}, "eviction": GOOD_LESSON},
                         "scores": [{"score": 9}, GOOD_SCORE],
                         "challenges": {"first-hit": {"solved": True}, "lru-victim": {"solved": True, "ops": 3}}})
        progress = Progress.load()
        assert progress.lessons == {"eviction": GOOD_LESSON}
        assert progress.scores == [GOOD_SCORE]
        assert progress.challenges == {"lru-victim": {"solved": True, "ops": 3}}
        assert "3 damaged record(s) skipped" in progress.warning
        assert "lessons 'the-node': predicted: must be a list" in progress.warning
        assert "every other record is kept" in progress.warning

    def test_saving_keeps_the_original_beside_the_new_file(self, data_dir):
        original = write(data_dir, {"version": 1, "lessons": {"the-node": {"predicted": "x"}, "eviction": GOOD_LESSON}})
        saved, warnings = update_progress(lambda p: p.complete_lesson("insertion", "Insertion"))
        assert saved and "damaged record" in warnings[0]
        assert (data_dir / "progress.json.damaged-1").read_text(encoding="utf-8") == original
        assert set(json.loads((data_dir / "progress.json").read_text())["lessons"]) == {"eviction", "insertion"}

    def test_progress_and_lessons_commands_work_with_a_bad_record(self, cli, data_dir):
        write(data_dir, {"lessons": {"the-node": {"predicted": "x"}}, "version": 1})
        shown, listed = cli("progress", data_dir=data_dir), cli("lessons", data_dir=data_dir)
        assert shown.returncode == 0 and "Lessons completed: 0/" in shown.stdout
        assert listed.returncode == 0 and "damaged record" in listed.stderr
        assert "Traceback" not in shown.stderr + listed.stderr

    def test_a_resume_position_with_a_bad_score_is_dropped(self, data_dir):
        write(data_dir, {"version": 1, "positions": {"the-node": {"block": 2, "predicted": 7},
                                                     "insertion": {"block": 1, "predicted": [1, 1]}}})
        assert Progress.load().positions == {"insertion": {"block": 1, "predicted": [1, 1]}}

    def test_a_lone_surrogate_is_dropped_and_saving_still_works(self, data_dir):
        write(data_dir, '{"version": 1, "lessons": {"a": {"title": "\\ud800"}, "eviction": {"title": "ok"}}}')
        saved, _ = update_progress(lambda p: p.complete_lesson("insertion"))
        assert saved
        assert set(json.loads((data_dir / "progress.json").read_text())["lessons"]) == {"eviction", "insertion"}
        assert [p.name for p in data_dir.iterdir() if "tmp" in p.name] == []   # no empty temp file left


class TestWholeFileDamage:
    def test_deep_nesting_is_damage_not_a_crash(self, data_dir):
        write(data_dir, "[" * 100_000)
        progress = Progress.load()
        assert progress.lessons == {} and "nested too deeply" in progress.warning
        assert (data_dir / "progress.json.damaged-1").exists()

    def test_huge_numbers_are_damage_not_a_crash(self, data_dir):
        write(data_dir, '{"version": 1, "scores": [' + "9" * 5000 + "]}")
        assert "4,300 digits" in Progress.load().warning


class TestUnreadableFilesAreLeftAlone:
    def _refuse(self, monkeypatch, path):
        """Reading ``path`` is refused as for a file of mode 000 (the tests may run as root,
        which reads any file): both Python's open and os.open raise PermissionError."""
        real_open, real_os_open = builtins.open, os.open

        def guarded(opener):
            def open_(file, *args, **kwargs):
                if os.fspath(file) == str(path):
                    raise PermissionError(13, "Permission denied", str(path))
                return opener(file, *args, **kwargs)
            return open_
        monkeypatch.setattr(builtins, "open", guarded(real_open))
        monkeypatch.setattr(os, "open", guarded(real_os_open))

    def test_mode_000_is_not_renamed_nor_overwritten(self, data_dir, monkeypatch):
        text = write(data_dir, {"version": 1, "lessons": {"eviction": GOOD_LESSON}})
        path = data_dir / "progress.json"
        self._refuse(monkeypatch, path)
        progress = Progress.load()
        assert "cannot read your progress file" in progress.warning and "permission denied" in progress.warning
        saved, warnings = update_progress(lambda p: p.complete_lesson("insertion"))
        monkeypatch.undo()
        assert not saved and "not overwritten" in warnings[-1]
        assert path.read_text(encoding="utf-8") == text
        assert sorted(p.name for p in data_dir.iterdir() if p.name != "progress.json.lock") == ["progress.json"]

    @pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
    def test_mode_000_for_real(self, data_dir):
        path = data_dir / "progress.json"
        write(data_dir, {"version": 1})
        path.chmod(0)
        try:
            assert Progress.load().read_only and path.exists()
        finally:
            path.chmod(0o600)

    def test_a_fifo_hangs_no_command(self, cli, data_dir):
        os.mkfifo(data_dir / "progress.json")
        started = time.monotonic()
        shown = cli("progress", data_dir=data_dir, timeout=60)
        done = cli("lessons", "--done", "1", data_dir=data_dir, timeout=60)
        assert time.monotonic() - started < 50
        assert shown.returncode == 0 and "not a regular file" in shown.stderr
        assert "not overwritten" in done.stderr
        assert (data_dir / "progress.json").is_fifo()


def test_twelve_concurrent_done_commands_record_all_twelve(data_dir):
    procs = [subprocess.Popen([sys.executable, "-m", "radixviz", "lessons", "--done", str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={"RADIXVIZ_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"})
             for n in range(1, 13)]
    outputs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert all("marked as completed" in out for out, _ in outputs)
    assert len(Progress.load().lessons) == 12


async def test_the_home_screen_says_what_is_wrong_and_keeps_the_good_records(data_dir):
    from radixviz.tui.app import RadixvizApp
    from tui_helpers import pane_rows, shows, wait_until
    write(data_dir, {"version": 1, "lessons": {"the-node": {"predicted": "x"}, "matching": GOOD_LESSON}})
    app = RadixvizApp("home", device="cpu", preload_engine=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.query_one("#home-warning").display)
        assert shows(app, "1 damaged record(s) skipped (lessons 'the-node'", "#home-warning")
        assert shows(app, "every other record is kept", "#home-warning")
        assert any("Lesson 2: Matching" in row and "✓" in row for row in pane_rows(app, "#home-menu"))
