"""A classroom server for the serve tests, run as the teacher would, with a fake HOME: the
teacher's shell profile, a secret, and their own progress file live there, so a test can
assert that no tab wrote them, nor got a byte of them back."""
from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[1] / "bench" / "serve_load.py"
_spec = importlib.util.spec_from_file_location("bench_serve_load", _BENCH)
load = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("bench_serve_load", load)
_spec.loader.exec_module(load)

SECRET = "teacher-secret-7f3a9c"
TEACHER_PROGRESS = {"version": 1, "lessons": {"eviction": {"completed": "2026-01-01T00:00:00Z", "title": "Eviction"}}}


@dataclass
class Teacher:
    """The teacher's machine: HOME and the files a tab must never touch."""
    home: Path

    @property
    def data(self) -> Path:
        return self.home / ".local" / "share" / "radixviz"

    @property
    def classroom(self) -> Path:
        return self.data / "classroom"

    def files(self) -> dict:
        """Every file in the teacher's HOME outside the class folder, with its bytes."""
        return {str(p.relative_to(self.home)): p.read_bytes() for p in sorted(self.home.rglob("*"))
                if p.is_file() and self.classroom not in p.parents}


def teacher_home(tmp: Path) -> Teacher:
    """A HOME holding a shell profile, an ssh key list, a secret and the teacher's progress."""
    home = tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".bashrc").write_text("# the teacher's shell profile\n")
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA teacher\n")
    (home / "secret.txt").write_text(SECRET + "\n")
    teacher = Teacher(home)
    teacher.data.mkdir(parents=True)
    (teacher.data / "progress.json").write_text(json.dumps(TEACHER_PROGRESS))
    return teacher


def start(teacher: Teacher, max_sessions: int, *extra: str, cwd: Path | None = None):
    """``radixviz serve`` as the teacher runs it: (process, base url)."""
    env = {k: v for k, v in os.environ.items() if k != "RADIXVIZ_DATA_DIR"}
    env["HOME"] = str(teacher.home)
    env.pop("XDG_DATA_HOME", None)
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return load.start_server(max_sessions, *extra, env=env)
    finally:
        os.chdir(old)


def everything_received(*tabs) -> str:
    """All a tab got back: what was drawn and every text message (downloads aside)."""
    return "".join(tab.text() + "".join(tab.texts) + tab.page for tab in tabs)


async def insert_in_a_new_sandbox(tab, wait: float) -> None:
    """From the home screen, open a sandbox in ``tab`` (a load.Client) and run one
    ``insert "kept"``: unsaved work the classroom must keep or offer back."""
    await tab.keys("s")
    await tab.wait_for("no steps yet", wait)
    await tab.keys(":")
    await asyncio.sleep(0.4)   # the command line opens before it takes keys
    await tab.keys('insert "kept"\r')
    await tab.wait_for("step 1/", wait)


async def until(check, timeout: float = 180, every: float = 0.2):
    """Poll ``check()`` until it is truthy and return what it gave: a hang guard (``timeout``
    seconds), not a timing."""
    for _ in range(int(timeout / every)):
        found = check()
        if found:
            return found
        await asyncio.sleep(every)
    raise TimeoutError(f"not so within {timeout} s")
