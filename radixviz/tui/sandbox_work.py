"""A sandbox's work and where it goes: saving and opening scripts, what is not saved yet,
and the autosave that keeps it when the terminal or the browser tab closes.

No widgets here: the stepper asks and shows, this decides, reads and writes. Two places:

- on this computer (``radixviz sandbox``/``home``): a script is any path the learner types;
  writes are atomic and an existing file is never replaced without asking;
- in a served session (``radixviz serve``): nothing typed names a path on the server. A
  save goes to the learner's browser as a download and a copy into the session's own
  folder, under a name made safe; opening picks from that folder.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from radixviz.files import atomic_write, excerpt, free_name
from radixviz.script import ScriptError, load_script, script_source

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from radixviz.script.parser import Op

SUFFIX = ".rv"
DEFAULT_NAME = "session.rv"
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 60
MAX_SCRIPTS = 200     # files kept in a served session's folder


class KeepsWork:
    """A screen that holds work a learner would lose by leaving (the app asks it first, on
    every way out: q, h, ctrl+q, the palette's Quit)."""

    def leave_then(self, go: Callable[[], None], where: str) -> None:
        """Keep or ask about the work, then call ``go()`` unless the learner chose to stay."""
        go()


@dataclass(frozen=True)
class Restorable:
    """An autosave left by a sandbox that closed without saving."""
    path: Path
    operations: int
    when: str          # local time it was last written, for the learner to recognise it


class SandboxWork:
    """The operations a sandbox has kept (saved, or given when it opened) and where its
    scripts go. ``served_folder`` set: a served session (see the module docstring)."""

    def __init__(self, autosave_folder: Path, served_folder: Path | None = None):
        self.autosave_folder = Path(autosave_folder)
        self.served_folder = Path(served_folder) if served_folder else None
        self.kept: list = []            # the operations as last saved or opened
        self.saved_to: Path | None = None
        self.autosave_path = self.autosave_folder / f"sandbox-{os.getpid()}{SUFFIX}"

    @property
    def served(self) -> bool:
        return self.served_folder is not None

    # -------------------------------------------------------------- unsaved work

    def keep(self, ops: Sequence[Op], saved_to: Path | None = None) -> None:
        """``ops`` are safe now (saved, or what the sandbox opened with)."""
        self.kept = list(ops)
        if saved_to is not None:
            self.saved_to = saved_to
        self.discard_autosave()

    def unsaved(self, ops: Sequence[Op]) -> int:
        """How many operations would be lost by leaving now (0 when nothing would)."""
        return 0 if list(ops) == self.kept else len(ops)

    # ---------------------------------------------------------------- saving

    def suggested_name(self) -> str:
        """The name the save dialog offers: the file saved to last, else a free name."""
        if self.served_folder is not None:   # served
            return self.saved_to.name if self.saved_to else free_name(self.served_folder / DEFAULT_NAME).name
        if self.saved_to is not None:
            return str(self.saved_to)
        return str(free_name(Path(DEFAULT_NAME)))

    def target(self, typed: str) -> Path:
        """Where a typed name would be written: the path itself on this computer, a safe
        name inside the session's folder when served."""
        if self.served_folder is not None:   # served
            return self.served_folder / safe_name(typed)
        return Path(typed).expanduser()

    def needs_overwrite(self, path: Path) -> bool:
        """True when ``path`` holds a file this sandbox did not write: ask first."""
        return os.path.lexists(path) and path != self.saved_to

    def free_alternative(self, path: Path) -> str:
        """A name next to ``path`` that nothing uses yet (for "choose another name")."""
        free = free_name(path)
        return free.name if self.served else str(free)

    def write(self, path: Path, ops: Sequence[Op], *, buggy: bool, note: str) -> str:
        """Write ``ops`` to ``path`` atomically; return the script's text. OSError,
        ValueError (a key the language cannot write) on failure; nothing is half-written."""
        text = script_source(ops, buggy=buggy, note=note)
        if self.served_folder is not None:   # served
            self.served_folder.mkdir(parents=True, exist_ok=True)
            if len(self.scripts()) >= MAX_SCRIPTS and not path.exists():
                raise OSError(f"this session's folder already holds {MAX_SCRIPTS} scripts")
        atomic_write(path, text)
        self.keep(ops, saved_to=path)
        return text

    # --------------------------------------------------------------- opening

    def read(self, typed: str) -> tuple[list | None, str | None]:
        """The operations of the script ``typed`` names: (ops, None), or (None, why not).
        A served session reads only from its own folder."""
        path = self.target(typed)
        if self.served and path.parent != self.served_folder:
            return None, "pick a script of this session"
        if not os.path.lexists(path):
            return None, f"no such file: {excerpt(str(path), 200)}"
        try:
            return load_script(path), None
        except ScriptError as exc:
            return None, str(exc)

    def scripts(self) -> list[str]:
        """The scripts in a served session's folder, newest first."""
        if self.served_folder is None or not self.served_folder.is_dir():
            return []
        found = [p for p in self.served_folder.iterdir() if p.suffix == SUFFIX and p.is_file()]
        return [p.name for p in sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)]

    # -------------------------------------------------------------- autosave

    def autosave(self, ops: Sequence[Op], *, buggy: bool, title: str) -> None:
        """Keep unsaved ``ops`` where the next start finds them (removed once nothing is
        unsaved). Never raises: an autosave that cannot be written only loses the backup."""
        if not self.unsaved(ops):
            self.discard_autosave()
            return
        try:
            self.autosave_folder.mkdir(parents=True, exist_ok=True)
            atomic_write(self.autosave_path, script_source(
                ops, buggy=buggy, note=f"autosave of the radixviz {title}, {time.strftime('%Y-%m-%d %H:%M')}"))
        except (OSError, ValueError):
            pass

    def discard_autosave(self, path: Path | None = None) -> None:
        try:
            os.unlink(path or self.autosave_path)
        except OSError:
            pass

    def restorable(self) -> Restorable | None:
        """The newest autosave a sandbox left when it closed without saving (its process is
        gone), or None."""
        if not self.autosave_folder.is_dir():
            return None
        found = []
        for path in self.autosave_folder.glob(f"sandbox-*{SUFFIX}"):
            pid = path.stem.removeprefix("sandbox-")
            if path == self.autosave_path or not pid.isdigit() or _alive(int(pid)):
                continue
            found.append(path)
        for path in sorted(found, key=lambda p: p.stat().st_mtime, reverse=True):
            try:
                ops = load_script(path)
            except ScriptError:
                self.discard_autosave(path)    # unreadable: nothing to offer
                continue
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
            return Restorable(path, len(ops), when)
        return None

    def restore(self, found: Restorable) -> list:
        """The operations of an autosave; the file is taken over by this sandbox's own."""
        ops = load_script(found.path)
        self.discard_autosave(found.path)
        return ops


def safe_name(typed: str) -> str:
    """A file name for a served session's folder from what a learner typed: its last part,
    only letters, digits, ``.``, ``_`` and ``-``, no leading dot, ending in ``.rv``."""
    name = SAFE_NAME.sub("-", typed.replace("\\", "/").rsplit("/", 1)[-1]).strip(".-")
    stem = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else name
    return (stem[:MAX_NAME - len(SUFFIX)] or "session") + SUFFIX


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

