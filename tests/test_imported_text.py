"""What a file a user can import says never drives the terminal, and a time in it is a time
(issue 53), from outside, as subprocesses: a progress file whose lesson record was
``completed: "2026-01-01\\x1b]0;PWNED\\x07\\x1b[2J"`` was accepted by ``progress --import``,
and ``radixviz progress`` then printed the escapes (the terminal retitled and cleared); a
script's key echoed back by ``radixviz run`` carried its escapes too."""
from __future__ import annotations

import json
import os

import pytest

from radixviz.lessons.progress import Progress

ESCAPES = "\x1b]0;PWNED\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07"     # retitle, clear, write the clipboard


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def run(cli, data_dir):
    """``radixviz ARGS`` in a fresh Python, its progress in ``data_dir``."""
    env = {"RADIXVIZ_DATA_DIR": str(data_dir), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return lambda *args: cli.process(*args, env=env)


def written(tmp_path, name: str, document: dict):
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


class TestAnImportedProgressFile:
    def test_a_time_that_is_not_one_is_refused_in_one_line_and_nothing_changes(self, run, data_dir, tmp_path):
        mine = Progress(path=data_dir / "progress.json")
        mine.complete_lesson("the-node", "The node")
        mine.save()
        before = (data_dir / "progress.json").read_bytes()
        bad = written(tmp_path, "theirs.json", {"version": 1, "lessons": {
            "insertion": {"completed": "2026-01-01" + ESCAPES, "title": "Insertion"}}})
        done = run("progress", "--import", str(bad))
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "completed: must be a time such as 2026-01-01T12:00:00Z" in done.stderr
        assert "your progress is unchanged" in done.stderr and "\x1b" not in done.stderr + done.stdout
        assert (data_dir / "progress.json").read_bytes() == before

    def test_its_texts_reach_the_terminal_without_their_control_characters(self, run, data_dir, tmp_path):
        theirs = written(tmp_path, "theirs.json", {
            "version": 1,
            "lessons": {"mine" + ESCAPES: {"completed": "2026-01-01T00:00:00Z", "title": "Mine" + ESCAPES}},
            "scores": [{"when": "2026-01-01T00:00:00Z", "score": 1, "total": 2, "difficulty": "easy" + ESCAPES}],
            "challenges": {"c" + ESCAPES: {"solved": True, "ops": 3, "when": "2026-01-01T00:00:00Z"}}})
        imported = run("progress", "--import", str(theirs))
        shown = run("progress")
        assert imported.returncode == 0 and shown.returncode == 0, imported.stderr + shown.stderr
        assert "Mine" in shown.stdout and "1/2  easy" in shown.stdout
        for done in (imported, shown):
            assert not any(c in done.stdout + done.stderr for c in "\x1b\x07\x9b"), done.stdout


class TestAScriptFile:
    def test_run_echoes_its_keys_without_control_characters(self, cli, tmp_path):
        script = tmp_path / "evil.rv"
        script.write_text(f'insert "ab{ESCAPES}c"\nmatch "abc"\n', encoding="utf-8")
        done = cli.process("run", str(script))
        assert done.returncode == 0, done.stderr
        assert 'insert "ab]0;PWNED' not in done.stdout and 'insert "ab' in done.stdout
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout
