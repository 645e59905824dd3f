"""Every bad input: one ``FILE:LINE:COL: message`` line, exit code 2, no traceback, nothing lost."""
import os
import subprocess
import sys

import pytest

from radixviz.script.parser import MAX_SCRIPT_BYTES


def script_file(tmp_path, text: str | bytes, name="ops.rv"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


# (script text, line, col, words the message must contain)
BAD_LINES = [
    ("insert abc\ninsrt abd\n", 2, 1, "unknown operation 'insrt' (did you mean 'insert'?)"),
    ("insert ab\nmatch\n", 2, 1, "missing argument: match needs a key"),
    ("insert ab\n  evict 5 6\n", 2, 11, "extra argument '6'"),
    ("insert a b\n", 1, 10, "extra argument 'b'"),
    ("evict five\n", 1, 7, "bad number 'five'"),
    ("tokens 1 x 3\n", 1, 10, "bad number 'x'"),
    ("insert ab\nevict -3\n", 2, 7, "negative eviction -3"),
    ('insert ab\ninsert "abc\n', 2, 8, "unterminated quote \""),
    ("matcher sloppy\n", 1, 9, "unknown matcher 'sloppy': use fixed or buggy"),
]


class TestBadScriptFiles:
    @pytest.mark.parametrize("text,line,col,words", BAD_LINES, ids=[b[3].split(":")[0] for b in BAD_LINES])
    def test_parse_errors_name_file_line_and_column(self, cli, tmp_path, text, line, col, words):
        path = script_file(tmp_path, text)
        code, out, err = cli("run", "--device", "cpu", path)
        assert code == 2
        assert err.startswith(f"{path}:{line}:{col}: ") and words in err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert out == ""  # nothing was applied, so there is nothing to show

    def test_same_errors_from_inline_ops(self, cli):
        code, _, err = cli("run", "-e", "insert ab; evcit 3")
        assert (code, err) == (2, "<-e>:1:12: unknown operation 'evcit' (did you mean 'evict'?)\n")

    def test_empty_file(self, cli, tmp_path):
        path = script_file(tmp_path, "# only a comment\n\n")
        code, _, err = cli("run", path)
        assert (code, err) == (2, f"{path}:1:1: empty script: no operations (see radixviz run --help)\n")

    def test_empty_inline_ops(self, cli):
        code, _, err = cli("run", "-e", "  ")
        assert (code, err) == (2, "<-e>:1:1: empty script: no operations\n")

    def test_binary_file(self, cli, tmp_path):
        path = script_file(tmp_path, b"insert a\x00\xff\n", "blob.bin")
        code, _, err = cli("run", path)
        assert (code, err) == (2, f"{path}:1:1: binary file: a script is plain text\n")

    def test_file_too_large(self, cli, tmp_path):
        path = script_file(tmp_path, "insert a\n" * (MAX_SCRIPT_BYTES // 9 + 1))
        code, _, err = cli("run", path)
        assert code == 2 and err.startswith(f"{path}:1:1: file too large (") and err.count("\n") == 1

    def test_missing_file(self, cli, tmp_path):
        path = str(tmp_path / "nope.rv")
        code, _, err = cli("run", path)
        assert code == 2 and err.startswith(f"{path}:1:1: cannot read: ")


class TestRefusedOperationsKeepWhatWasApplied:
    def test_unlock_without_lock_prints_the_applied_state_then_the_error(self, cli):
        code, out, err = cli("run", "--device", "cpu", "--width", "80", "-e",
                             "insert abc; match ab; unlock ab; insert never")
        assert code == 2
        assert err == "<-e>:1:23: no lock on 'ab' to release (locks held: none)\n"
        assert "  1  insert abc  →  prefix_len 0; new slots 0–2" in out
        assert "  2  match ab  →  2 token(s) 'ab' (slots 0–1)" in out
        assert "never" not in out and "'c'  slots 2" in out and "3/128 used" in out

    def test_pool_full_is_refused_before_anything_changes(self, cli):
        code, out, err = cli("run", "--device", "cpu", "--pool-size", "4", "-e",
                             "insert abc; lock abc; insert xyz")
        assert code == 2
        assert err.startswith("<-e>:1:23: pool full: 3 slots needed, 1 free and 0 evictable")
        assert "● 'abc'  slots 0–2  ref 1" in out


class TestBadOptions:
    @pytest.mark.parametrize("argv,words", [
        (["run"], "give a SCRIPT file or -e OPS"),
        (["run", "x.rv", "-e", "insert a"], "give a SCRIPT file or -e OPS"),
        (["run", "--pool-size", "0", "-e", "insert a"], "argument --pool-size: must be between 1 and 1000000, not 0"),
        (["run", "--device", "tpu9", "-e", "insert a"], "argument --device: tpu9: use auto, cpu or cuda"),
    ])
    def test_one_line_and_exit_2(self, cli, argv, words):
        code, _, err = cli(*argv)
        assert code == 2 and words in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_real_process_prints_no_traceback(tmp_path):
    """The installed entry point, end to end: exit status and stderr as a shell sees them."""
    path = script_file(tmp_path, "insert abc\nmatch 'abd\n")
    proc = subprocess.run([sys.executable, "-m", "radixviz", "run", path], capture_output=True, text=True,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"}, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == f"{path}:2:7: unterminated quote '\n"
