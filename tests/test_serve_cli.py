"""``radixviz serve``'s options: what every session runs, and bad input refused before serving."""
import shlex
import sys

import pytest

from radixviz.cli import build_parser, main


def command_for(*argv) -> list:
    from radixviz.commands.serve import app_command
    args = build_parser().parse_args(["serve", *argv])
    words = shlex.split(app_command(args))
    assert words[:4] == ["exec", sys.executable, "-m", "radixviz"]
    return words[4:]


class TestWhatEachSessionRuns:
    def test_home_without_preloading_torch(self):
        assert command_for() == ["home", "--no-preload", "--device", "cpu"]

    def test_options_pass_through(self, tmp_path):
        folder = str(tmp_path / "my lessons")          # a space survives the shell
        assert command_for("--buggy", "--lessons", folder) == \
            ["home", "--no-preload", "--buggy", "--lessons", folder, "--device", "cpu"]

    def test_a_lesson_number_opens_that_lesson(self):
        assert command_for("8") == ["lesson", "8", "--device", "cpu"]


class TestBadInput:
    @pytest.mark.parametrize("argv, says", [
        (["--max-sessions", "0"], "argument --max-sessions: must be between 1 and 1000, not 0"),
        (["--port", "70000"], "argument --port: must be between 0 and 65535, not 70000"),
        (["--lessons", "/no/such/folder"], "no such folder"),
        (["99"], "no lesson '99'"),
        (["2", "--buggy"], "--buggy"),
        (["--device", "tpu"], "argument --device: tpu: use auto, cpu or cuda"),
    ])
    def test_one_line_exit_2_and_no_server(self, capsys, argv, says):
        with pytest.raises(SystemExit) as info:
            main(["serve", *argv])
        err = capsys.readouterr().err
        assert info.value.code == 2 and says in err and len(err.strip().splitlines()) == 1
