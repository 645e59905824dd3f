"""Exports are written whole or not at all: when the disk fills up half-way (simulated with
a file-size limit, which makes writes fail as a full disk does) the good file that was
there stays as it was and no temporary file is left; ``--all-steps`` leaves no stale steps
of an earlier, longer run."""
import os
import subprocess
import sys
import textwrap

import pytest

from radixviz.cli import main
from radixviz.files import atomic_write

FULL_DISK = textwrap.dedent("""
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)    # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
    from radixviz.cli import main
    main(sys.argv[1:])
""")
OPS = 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match "Hello_world"'


def on_a_full_disk(*argv, data_dir):
    return subprocess.run([sys.executable, "-c", FULL_DISK, *argv], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "RADIXVIZ_DATA_DIR": str(data_dir)})


GOOD = "<svg>a good diagram from before</svg>\n" * 10


@pytest.mark.parametrize("argv, name", [
    (["export", "-e", OPS, "-o"], "tree.svg"),                       # render/graphviz.py
    (["export", "-e", OPS, "-o"], "steps.html"),                     # commands/export_pages.py
    (["progress", "--export"], "progress.json"),                     # progress --export
])
def test_a_full_disk_leaves_the_old_file_whole(tmp_path, argv, name):
    target = tmp_path / "out" / name
    target.parent.mkdir()
    if name == "progress.json":
        from radixviz.lessons.progress import Progress
        progress = Progress(path=tmp_path / "data" / "progress.json")
        for n in range(60):                     # enough that the export passes the size limit
            progress.complete_lesson(f"lesson-{n}", f"A lesson with a long enough title {n}")
        progress.save()
    target.write_text(GOOD)
    done = on_a_full_disk(*argv, str(target), data_dir=tmp_path / "data")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert target.read_text() == GOOD
    assert sorted(p.name for p in target.parent.iterdir()) == [name]


def test_atomic_write_fails_before_touching_anything_on_text_it_cannot_encode(tmp_path):
    target = tmp_path / "x.txt"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "\ud800")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_all_steps_removes_the_stale_steps_of_a_longer_run(tmp_path, capsys):
    folder = tmp_path / "steps"
    with pytest.raises(SystemExit):
        main(["export", "-e", OPS, "--all-steps", str(folder), "--format", "dot"])
    longer = sorted(p.name for p in folder.iterdir())
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit):
        main(["export", "-e", 'insert "abc"', "--all-steps", str(folder), "--format", "dot"])
    shorter = sorted(p.name for p in folder.iterdir())
    assert len(longer) > 10
    assert shorter == sorted(["notes.txt"] + [f"step-{n:04d}.dot" for n in range(1, len(shorter))])
    assert len(shorter) < len(longer)
