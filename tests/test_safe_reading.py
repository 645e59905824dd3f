"""Every command that reads a file a person names reads it the same safe way
(``radixviz.files``): a device, a FIFO or a folder is refused at once with one line and
exit 2, never read without limit and never waited on; text comes out whole (a byte-order
mark, U+2028 inside a key) and huge input is never echoed back in full.

The device and FIFO cases run in one child process with a memory cap and a watchdog, so
code that reads ``/dev/zero`` without a limit fails the test instead of the machine. The
watchdog is a hang guard only (120 s a case, far past any machine's slowness): it never
interrupts the child, which may be importing torch (an alarm raised inside that import once
left ``radixviz.cache`` half-initialised and the child died with SIGSEGV); it prints what
the child found so far, names the case that hung and ends the child.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from radixviz.cli import main

CHILD = textwrap.dedent("""
    import contextlib, io, json, os, resource, sys, threading
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    from radixviz.cli import main

    results, current = [], [None]

    def watchdog():
        while True:
            seen = len(results)
            if not finished.wait(120) and len(results) == seen:
                # the real stdout: the case that hangs has sys.stdout redirected
                os.write(1, json.dumps(results + [["hung", f"no answer in 120 s to {current[0]}"]]).encode())
                os._exit(0)
            if finished.is_set():
                return
    finished = threading.Event()
    threading.Thread(target=watchdog, daemon=True).start()
    for argv in json.loads(sys.argv[1]):
        current[0] = argv
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code
        except BaseException as exc:
            code = type(exc).__name__
        results.append([code, err.getvalue()])
    finished.set()
    print(json.dumps(results), flush=True)
""")

COMMANDS = {
    "run": ["run"],
    "verify-kv": ["verify-kv"],
    "challenge --check": ["challenge", "1", "--check"],
    "progress --import": ["progress", "--import"],
    "simulate --trace": ["simulate", "--trace"],
}


def run_child(cases: list, data_dir) -> list:
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cases)], capture_output=True, text=True,
                          timeout=900, env={**os.environ, "RADIXVIZ_DATA_DIR": str(data_dir)})
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.splitlines()[-1])
    assert all(result[0] != "hung" for result in results), results[-1][1]
    return results


def test_devices_fifos_and_folders_are_refused_by_every_command(tmp_path):
    fifo = tmp_path / "pipe.rv"
    os.mkfifo(fifo)
    names = {"a FIFO": str(fifo), "a device": "/dev/zero", "a folder": str(tmp_path)}
    cases, labels = [], []
    for command, argv in COMMANDS.items():
        for kind, path in names.items():
            cases.append(argv + [path])
            labels.append(f"{command} on {kind}")
    results = run_child(cases, tmp_path / "data")
    for label, (code, err) in zip(labels, results, strict=True):
        assert code == 2, f"{label}: exit {code}: {err}"
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, f"{label}: {err}"
        assert any(words in err for words in ("not a regular file", "is a folder")), f"{label}: {err}"


def test_the_sandbox_refuses_a_folder_saying_so(capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        main(["sandbox", str(tmp_path)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "is a folder" in err and "no such script file" not in err


def cli(capsys, *argv):
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    return info.value.code, out, err


class TestTextComesOutWhole:
    def test_a_byte_order_mark_is_not_part_of_the_first_operation(self, capsys, tmp_path):
        script = tmp_path / "bom.rv"
        script.write_bytes("\ufeffinsert \"abc\"\n".encode("utf-8"))
        code, out, err = cli(capsys, "run", str(script), "--json")
        assert code == 0 and json.loads(out)["ops"][0]["text"] == 'insert "abc"', err

    def test_u2028_inside_a_quoted_key_is_one_token(self, capsys, tmp_path):
        script = tmp_path / "sep.rv"
        script.write_text('insert "a\u2028b"\n', encoding="utf-8")
        code, out, err = cli(capsys, "run", str(script), "--json")
        assert code == 0, err
        assert json.loads(out)["ops"][0]["result"]["new_slots"] == [0, 1, 2]

    def test_a_5000_digit_number_is_not_echoed_in_full(self, capsys, tmp_path):
        script = tmp_path / "big.rv"
        script.write_text("evict " + "9" * 5000 + "\n")
        code, _, err = cli(capsys, "run", str(script))
        assert code == 2 and err.startswith(f"{script}:1:7: number too large (5,000 digits")
        assert len(err) < 300

    def test_an_unknown_word_from_a_file_is_a_short_excerpt(self, capsys, tmp_path):
        secret = tmp_path / "credentials"
        secret.write_text("https://user:0123456789abcdef0123456789@example.com\n")
        code, _, err = cli(capsys, "run", str(secret))
        assert code == 2 and "0123456789abcdef0123456789" not in err
        assert "unknown operation 'https://user:012…'" in err


def test_a_huge_number_in_a_challenge_goal_is_named_with_its_line(capsys, tmp_path):
    from pathlib import Path
    shipped = Path(__file__).resolve().parents[1] / "lessons" / "challenges" / "01-first-hit.md"
    text = shipped.read_text(encoding="utf-8").replace("match.matched == 6", "match.matched == " + "9" * 5000)
    (tmp_path / "99-big.md").write_text(text.replace("id: first-hit", "id: big").replace("number: 1", "number: 99"))
    code, _, err = cli(capsys, "challenges", "--lessons", str(tmp_path))
    assert code == 2 and f"{tmp_path / '99-big.md'}:13:" in err and "number too large" in err and len(err) < 300
