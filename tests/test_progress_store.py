"""Progress: kept across runs, damaged files set aside, moved with export/import, never a crash."""
import json
import subprocess
import sys

import pytest

from radixviz.lessons import load_lessons
from radixviz.lessons.progress import Progress, ProgressError


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def cli(cli):
    """``radixviz ARGS`` in a fresh Python that keeps its progress in ``data_dir``."""
    return lambda *args, data_dir: cli.process(*args, env={"RADIXVIZ_DATA_DIR": str(data_dir),
                                                           "PATH": "/usr/bin:/bin"})


class TestStore:
    def test_round_trip(self, data_dir):
        p = Progress.load()
        p.complete_lesson("eviction", "Eviction")
        p.record_score(4, 6, "hard", lesson=4, seed=11)
        p.save()
        again = Progress.load()
        assert list(again.lessons) == ["eviction"] and again.scores[0]["score"] == 4
        assert again.best_scores == {(4, "hard"): 4 / 6} and again.warning is None

    @pytest.mark.parametrize("junk", ["{not json", '{"version": 99}', '{"version": 1, "scores": {"score": 9}}',
                                      "\udcff".encode("utf-8", "surrogatepass").decode("latin-1")])
    def test_damaged_file_is_moved_aside(self, data_dir, junk):
        (data_dir / "progress.json").write_text(junk, encoding="latin-1")
        p = Progress.load()
        assert p.lessons == {} and p.scores == []
        assert "damaged" in p.warning and "progress.json.damaged-1" in p.warning
        assert (data_dir / "progress.json.damaged-1").read_text(encoding="latin-1") == junk
        assert not (data_dir / "progress.json").exists()

    def test_mark_lesson_completed_for_the_app(self, data_dir):
        from radixviz.lessons import load_lessons
        from radixviz.lessons.progress import mark_lesson_completed
        (data_dir / "progress.json").write_text("[]")
        warning = mark_lesson_completed(load_lessons()[4])
        assert "damaged" in warning and list(Progress.load().lessons) == ["reference-counting"]

    def test_merge_refuses_other_files_and_changes_nothing(self, data_dir):
        p = Progress.load()
        p.complete_lesson("the-node")
        with pytest.raises(ProgressError):
            p.merge('{"lessons": []}')
        assert list(p.lessons) == ["the-node"]


class TestCommand:
    def test_show_export_reset_import(self, cli, data_dir, tmp_path):
        p = Progress.load()
        p.complete_lesson("bug-7", "The matching bug")
        p.record_score(5, 6, "medium", seed=3)
        p.save()
        shown = cli("progress", data_dir=data_dir)
        assert shown.returncode == 0 and "5/6" in shown.stdout
        assert f"Lessons completed: 1/{len(load_lessons())}" in shown.stdout
        export = tmp_path / "mine.json"
        assert cli("progress", "--export", str(export), data_dir=data_dir).returncode == 0
        assert cli("progress", "--reset", data_dir=data_dir).returncode == 0
        assert Progress.load().lessons == {}
        back = cli("progress", "--import", str(export), data_dir=data_dir)
        assert back.returncode == 0 and "imported 1 completed lessons and 1 scores" in back.stdout
        assert list(Progress.load().lessons) == ["bug-7"]

    def test_bad_import_is_bad_input_and_keeps_progress(self, cli, data_dir, tmp_path):
        Progress(lessons={"eviction": {"completed": "x"}}, path=data_dir / "progress.json").save()
        junk = tmp_path / "junk.json"
        junk.write_text("[1, 2]")
        done = cli("progress", "--import", str(junk), data_dir=data_dir)
        assert done.returncode == 2 and "not a radixviz progress file" in done.stderr
        assert "Traceback" not in done.stderr
        assert json.loads((data_dir / "progress.json").read_text())["lessons"] == {"eviction": {"completed": "x"}}

    def test_damaged_file_reported_not_crashed(self, cli, data_dir):
        (data_dir / "progress.json").write_text("{oops")
        done = cli("progress", data_dir=data_dir)
        assert done.returncode == 0 and "is damaged" in done.stderr
        assert f"Lessons completed: 0/{len(load_lessons())}" in done.stdout

    def test_reading_a_lesson_marks_it_completed(self, cli, data_dir):
        done = subprocess.run([sys.executable, "-m", "radixviz", "lessons", "--read", "1"], input="1\n2\n3\n" * 4,
                              capture_output=True, text=True, timeout=120,
                              env={"RADIXVIZ_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0 and "✓ you predicted it" in done.stdout
        assert "End of lesson 1" in done.stdout and list(Progress.load().lessons) == ["the-node"]
        listing = cli("lessons", data_dir=data_dir)
        assert "✓  1. The node" in listing.stdout and "1 completed" in listing.stdout


def test_reading_a_lesson_when_progress_cannot_be_saved_says_so_without_a_traceback(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = subprocess.run([sys.executable, "-m", "radixviz", "lessons", "--read", "1"], input="1\n2\n3\n" * 4,
                          capture_output=True, text=True, timeout=120,
                          env={"RADIXVIZ_DATA_DIR": str(blocker / "data"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and "Traceback" not in done.stderr
    last = done.stdout.rstrip().splitlines()[-1]
    assert last.startswith("End of lesson 1. You predicted")          # not "marked as completed"
    assert done.stderr.startswith("radixviz: could not save your progress:") and done.stderr.count("\n") == 1
