"""The entry point: one-line errors with exit code 2, and a quiet stop when the reader leaves."""
import subprocess
import sys

import pytest


def radixviz(*argv, **kw):
    return subprocess.run([sys.executable, "-m", "radixviz", *argv], capture_output=True,
                          text=True, timeout=120, **kw)


@pytest.mark.parametrize("argv, message", [
    (["quiz", "--seed", "x"], "radixviz quiz: argument --seed: invalid int value: 'x' (see radixviz quiz --help)"),
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
