"""Reading and writing the files people hand us, safely: one helper for every command.

Reading: only regular files are opened (a device such as ``/dev/zero`` or a FIFO is
refused before a byte is read, so nothing grows without bound or hangs), and never more
than a byte limit. Text is UTF-8; a leading byte-order mark is dropped.

Writing: a temporary file beside the target, then one rename, so a full disk or a crash
leaves the old file whole instead of a truncated new one. A served student's app has a
share of the class's disk (``DISK_SHARE_ENV``, bytes, for the folder ``FOLDER_ENV``): a
write that would take that folder past it is refused here, where every file the app keeps
(progress, saves, autosaves) is written, whatever screen asked.

Messages never repeat a file's content beyond ``excerpt`` (radixviz.errors): a short, escaped piece.
"""
from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import sys
from pathlib import Path

from radixviz.errors import EXCERPT_CHARS, excerpt  # noqa: F401 - the one excerpt, re-exported

BOM = "\ufeff"
DISK_SHARE_ENV = "RADIXVIZ_DISK_SHARE"     # set by ``radixviz serve`` for each session's app
FOLDER_ENV = "RADIXVIZ_DATA_DIR"           # the folder the share counts (the student's own)
# escape sequences (CSI, OSC, DCS and the two-character ones), then any other C0/C1 control
# character but tab, newline and carriage return, and DEL
_CONTROLS = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\x07\x1b]*(\x07|\x1b\\)?|[ -/]*[0-~])?"
                       r"|\x9b[0-?]*[ -/]*[@-~]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class ReadError(Exception):
    """A file that cannot be read as asked; ``str`` is one line without the path.
    ``missing``: there is no such file; ``content``: it was read, but is not text."""

    def __init__(self, message: str, *, missing: bool = False, content: bool = False):
        super().__init__(message)
        self.missing, self.content = missing, content


def read_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them; ReadError if
    it is missing, unreadable, not a regular file or larger."""
    fd = _open_regular(path, limit)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise _os_error(exc) from None
    finally:
        os.close(fd)
    if size > limit:
        raise ReadError(f"file too large (over {limit:,} bytes)")
    return b"".join(chunks)


def open_stream(path: str | os.PathLike[str], binary: bool = False):
    """The regular file at ``path`` open for reading in one pass, of any size (a trace):
    text (UTF-8, a byte-order mark dropped) or ``binary``. ReadError, without waiting, for a
    FIFO, a device or a folder, as ``read_bytes``."""
    fd = _open_regular(path, sys.maxsize)
    if binary:
        return os.fdopen(fd, "rb")
    return os.fdopen(fd, encoding="utf-8-sig", newline="\n")


def read_text(path: str | os.PathLike[str], limit: int) -> str:
    """``read_bytes`` decoded as UTF-8 (a leading byte-order mark dropped); ReadError for a
    binary or non-UTF-8 file, naming the line of the first bad byte."""
    return decode_text(read_bytes(path, limit))


def decode_text(data: bytes) -> str:
    """UTF-8 text without its byte-order mark; ReadError for binary or non-UTF-8 data."""
    if b"\x00" in data:
        raise ReadError(f"binary file, not text (a zero byte on line {_line_of(data, data.index(0))})",
                        content=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReadError(f"not UTF-8 text (line {_line_of(data, exc.start)})", content=True) from None
    return text[1:] if text.startswith(BOM) else text


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _open_regular(path: str | os.PathLike[str], limit: int) -> int:
    """A read-only descriptor of the regular file at ``path`` of at most ``limit`` bytes;
    ReadError, without waiting, for anything else."""
    path = os.fspath(path)
    try:
        # stat first: a FIFO or a device is refused without being opened at all
        _check_regular(os.stat(path), limit)
        # O_NONBLOCK: if the path was swapped for a FIFO since, open() returns at once
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _os_error(exc) from None
    try:
        _check_regular(os.fstat(fd), limit)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_regular(info: os.stat_result, limit: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise ReadError("is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise ReadError("not a regular file (a device, a pipe or a socket)")
    if info.st_size > limit:
        raise ReadError(f"file too large ({info.st_size:,} bytes; the limit is {limit:,})")


def _os_error(exc: OSError) -> ReadError:
    return ReadError((exc.strerror or str(exc)).lower().rstrip("."),
                     missing=isinstance(exc, FileNotFoundError))


def atomic_write(path: str | os.PathLike[str], data: str | bytes, encoding: str = "utf-8") -> None:
    """Write ``data`` to ``path`` all at once: a temporary file in the same folder, flushed
    to disk, then renamed over the target. On any failure the old file (if any) is as it
    was and no temporary file is left. The new file has the usual permissions (0666 less
    the umask), whatever the old one had. OSError (or UnicodeEncodeError) on failure."""
    path = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else data   # fails before any file
    _check_share(path, len(payload))
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def folder_bytes(folder: str | os.PathLike[str]) -> int:
    """Bytes of the files under ``folder`` (links not followed: a link counts as itself)."""
    total, stack = 0, [os.fspath(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        pass
        except OSError:
            pass
    return total


def _check_share(path: Path, size: int) -> None:
    """OSError (EDQUOT) when writing ``size`` bytes to ``path`` would take a served student's
    folder past their share of the class's disk; nothing outside that folder is counted."""
    share, folder = os.environ.get(DISK_SHARE_ENV, ""), os.environ.get(FOLDER_ENV, "")
    if not share.isdigit() or not folder:
        return
    root = os.path.realpath(folder)
    target = os.path.realpath(path)
    if os.path.commonpath([root, target]) != root:
        return
    try:
        replaced = os.lstat(target).st_size
    except OSError:
        replaced = 0
    used = folder_bytes(root)
    if used - replaced + size > int(share):
        raise OSError(errno.EDQUOT, f"your folder is full ({used / 1e6:.2f} MB of your {int(share) / 1e6:.2f} MB): "
                                    "delete a script (or ask your teacher)")


def free_name(path: str | os.PathLike[str]) -> Path:
    """``path`` if nothing is there, else the first free ``stem-2.suffix``, ``stem-3...``."""
    path = Path(path)
    if not os.path.lexists(path):
        return path
    n = 2
    while os.path.lexists(path.with_name(f"{path.stem}-{n}{path.suffix}")):
        n += 1
    return path.with_name(f"{path.stem}-{n}{path.suffix}")


def strip_controls(text: str) -> str:
    """``text`` without terminal control sequences or control characters (tab, newline
    and carriage return stay): what a file says can be printed without driving the
    terminal (moving the cursor, retitling the window, hiding what follows)."""
    return _CONTROLS.sub("", text)
