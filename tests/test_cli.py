"""The entry point: one-line errors with exit code 2, and a quiet stop when the reader leaves."""
import subprocess
import sys

import pytest


def radixviz(*argv, **kw):
    return subprocess.run([sys.executable, "-m", "radixviz", *argv], capture_output=True,
                          text=True, timeout=120, **kw)


@pytest.mark.parametrize("argv, message", [
    (["quiz", "--seed", "x"],
     "radixviz quiz: argument --seed: must be a whole number, not 'x' (see radixviz quiz --help)"),
    (["run", "--pool-size"], "radixviz run: argument --pool-size: expected one argument (see radixviz run --help)"),
    (["explode"], "radixviz: argument COMMAND: invalid choice: 'explode'"),
])
def test_argument_errors_are_one_line_and_exit_2(argv, message):
    out = radixviz(*argv)
    assert out.returncode == 2
    assert out.stderr.startswith(message)
    assert out.stderr.count("\n") == 1 and "usage:" not in out.stderr


def test_a_closed_pipe_stops_quietly():
    script = "; ".join(f'insert "request number {i}"' for i in range(300))
    reader = subprocess.Popen([sys.executable, "-m", "radixviz", "run", "--steps", "-e", script],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.readline()
    reader.stdout.close()  # like `| head -1`
    _, err = reader.communicate(timeout=120)
    assert reader.returncode == 1
    assert err == b""


class TestOneLessonLookup:
    """``lesson``, ``lessons --read/--done`` and ``quiz --lesson`` find a lesson the same way."""

    @pytest.mark.parametrize("wanted", ["1", "01", " 001 ", "the-node", "The-Node", "01-the-node"])
    def test_lesson_opens_the_lesson_however_it_is_named(self, wanted, monkeypatch):
        from radixviz.cli import main
        from radixviz.tui.app import RadixvizApp
        opened = []
        monkeypatch.setattr(RadixvizApp, "run", lambda app: opened.append((app.start, app.lesson)))
        with pytest.raises(SystemExit) as info:
            main(["lesson", wanted, "--device", "cpu"])
        assert info.value.code == 0
        assert [(start, lesson.id) for start, lesson in opened] == [("lesson", "the-node")]

    def test_read_takes_a_leading_zero_too(self):
        out = radixviz("lessons", "--read", "02", input="")
        assert out.returncode == 0 and out.stdout.startswith("Lesson 2: ")

    def test_an_unknown_lesson_is_one_line_listing_them(self):
        for argv in (["lesson", "42"], ["lessons", "--read", "42"], ["quiz", "--plain", "--lesson", "42"]):
            out = radixviz(*argv, input="")
            assert out.returncode == 2 and out.stderr.startswith("radixviz: no lesson '42' (lessons: 1, 2")
            assert out.stderr.count("\n") == 1


class TestOneSetOfLimits:
    """Every command that takes the same number refuses it with the same limits and words."""

    @pytest.mark.parametrize("command", ["run", "export", "verify-kv", "sandbox", "home"])
    def test_pool_size(self, command):
        script = ["-e", "insert a"] if command in ("run", "export", "verify-kv") else []
        out = radixviz(command, "--pool-size", "1000001", *script)
        assert out.returncode == 2 and out.stderr.count("\n") == 1
        assert "argument --pool-size: must be between 1 and 1000000, not 1000001" in out.stderr

    @pytest.mark.parametrize("argv", [["quiz", "--plain"], ["verify-kv", "-e", "match a"], ["simulate"]])
    def test_seed(self, argv):
        out = radixviz(*argv, "--seed", "-3")
        assert out.returncode == 2
        assert "argument --seed: must be between 0 and 9223372036854775807, not -3" in out.stderr

    def test_the_scheduler_form_and_simulate_app_share_the_screen_limits(self):
        from radixviz.settings import check_settings
        _, form_error = check_settings("few-shot", "lpm", "0", "501", "1024")
        out = radixviz("simulate", "--app", "--requests", "501")
        assert out.returncode == 2 and out.stderr == f"radixviz: --app: {form_error}\n"

    def test_the_commands_default_pool_is_the_sessions(self):
        from radixviz.script import DEFAULT_POOL_SIZE
        from radixviz.settings import POOL_SLOTS
        assert POOL_SLOTS.default == DEFAULT_POOL_SIZE
