"""The progress file on disk: read it safely, check it against its JSON schema, lock it.

``progress.schema.json`` (beside this module) describes the document. Its shape is checked
as a whole (not JSON, another version, ``lessons`` not a mapping: the file is damaged);
then each record (a lesson, a score, a challenge, a resume position) on its own, so a
damaged record is dropped with a note and every good one is kept. A time must be one
(``2026-01-01T12:00:00Z``), and every text a record keeps is stripped of terminal control
characters as it is read: a progress file is imported from anywhere, and its titles are
printed (an escape sequence in one retitled the terminal and cleared it, issue 53).

Writers take an exclusive lock on ``progress.json.lock`` around load, change and save, so
twelve commands finishing at once record all twelve.
"""
from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from radixviz.files import ReadError, excerpt, read_text, strip_controls

if TYPE_CHECKING:
    from collections.abc import Iterable
    from jsonschema.exceptions import ValidationError
    from typing import Any

fcntl: ModuleType | None
try:
    import fcntl as _fcntl
    fcntl = _fcntl
except ImportError:   # Windows: writes are still atomic, only not serialized
    fcntl = None

SCHEMA_FILE = Path(__file__).with_name("progress.schema.json")
MAX_PROGRESS_BYTES = 20_000_000
VERSION = 1
# top-level field -> the $defs entry each of its records must match
TYPE_WORDS = {"array": "a list", "object": "a mapping", "integer": "a whole number",
              "string": "text", "boolean": "true or false", "null": "null"}
RECORD_KINDS = {"lessons": "lesson", "scores": "score", "challenges": "challenge",
                "positions": "position"}


class ProgressError(Exception):
    """A progress file that cannot be used as a whole: one line."""


@dataclass
class Document:
    """A checked progress document: the good records, and a line per record dropped."""
    lessons: dict = field(default_factory=dict)
    scores: list = field(default_factory=list)
    challenges: dict = field(default_factory=dict)
    positions: dict = field(default_factory=dict)
    dropped: list = field(default_factory=list)
    bad_times: list = field(default_factory=list)   # the dropped records whose time is no time


@cache
def schema() -> dict:
    """The progress file's JSON schema (``progress.schema.json``)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


@cache
def _validator(ref: str | None = None):
    """A validator for the whole document (``ref`` None) or for one ``$defs`` entry."""
    import jsonschema  # jsonschema: 40 ms, paid only when a progress file is read
    root = schema()
    target = root if ref is None else {"$ref": f"#/$defs/{ref}", "$defs": root["$defs"]}
    return jsonschema.Draft202012Validator(target)


def parse_document(text: str) -> Document:
    """The good records of a progress file's text; ProgressError when the whole document
    is unusable (not JSON, nested too deeply, another version, the wrong shape)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProgressError(f"not JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise ProgressError("not a progress file: JSON nested too deeply") from None
    except ValueError:   # Python refuses integers of more than 4,300 digits
        raise ProgressError("not a progress file: a number of more than 4,300 digits") from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise ProgressError(f"not a radixviz progress file (expected version {VERSION})")
    error = _best_error(_validator().iter_errors(data))
    if error is not None:
        raise ProgressError(f"not a radixviz progress file: {_where(error)}{_say(error)}")
    document = Document()
    for name, kind in RECORD_KINDS.items():
        records = data.get(name, [] if name == "scores" else {})
        items = enumerate(records) if isinstance(records, list) else records.items()
        kept = getattr(document, name)
        for key, record in items:
            problem = record_problem(kind, record)
            if problem:
                label = f"#{key + 1}" if isinstance(records, list) else excerpt(str(key), 30)
                document.dropped.append(f"{name} {label}: {problem}")
                if problem.endswith(NOT_A_TIME):
                    document.bad_times.append(document.dropped[-1])
            elif isinstance(kept, list):
                kept.append(_without_controls(record))
            else:
                kept[strip_controls(str(key))] = _without_controls(record)
    return document


def record_problem(kind: str, record: dict[str, Any]) -> str | None:
    """Why one record does not match its schema entry (or holds text that cannot be
    written back, a lone surrogate), or None when it is good."""
    error = _best_error(_validator(kind).iter_errors(record))
    if error is not None:
        return f"{_where(error)}{_say(error)}"
    if kind == "score" and record["score"] > record["total"]:
        return "score is more than total"
    if "predicted" in record and record["predicted"][0] > record["predicted"][1]:
        return "predicted: more right than asked"
    if _has_surrogate(record):
        return "text that is not valid Unicode (a lone surrogate)"
    return None


NOT_A_TIME = "must be a time such as 2026-01-01T12:00:00Z"


def _without_controls(value):
    """``value`` with every text in it (keys too) stripped of control characters."""
    if isinstance(value, str):
        return strip_controls(value)
    if isinstance(value, dict):
        return {strip_controls(k): _without_controls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_controls(v) for v in value]
    return value


def _best_error(errors: Iterable[ValidationError]):
    """The error jsonschema deems most telling, or None."""
    from jsonschema.exceptions import best_match  # jsonschema: loaded with the validator
    return best_match(errors)


def _where(error: ValidationError) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return f"{excerpt(path, 40)[1:-1]}: " if path else ""


def _say(error: ValidationError) -> str:
    if error.validator == "type":
        return f"must be {' or '.join(TYPE_WORDS.get(t, t) for t in _listed(error.validator_value))}"
    if error.validator == "pattern" and "UTC time" in str(error.schema.get("description", "")):
        return NOT_A_TIME
    if error.validator == "required":
        return error.message.replace("'", "").split(" is")[0] + " is missing"
    return excerpt(error.message, 80)[1:-1]


def _listed(value: object) -> list:
    return value if isinstance(value, list) else [value]


def _has_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def read_progress_text(path: Path) -> str | None:
    """The file's text, or None when there is no file; ReadError when it cannot be read
    (a FIFO or device, no permission, too large) and ProgressError when it is not text."""
    try:
        return read_text(path, MAX_PROGRESS_BYTES)
    except ReadError as exc:
        if exc.missing:
            return None
        if exc.content:
            raise ProgressError(str(exc)) from None
        raise


@contextmanager
def locked(path: Path):
    """Hold an exclusive lock beside ``path`` (``NAME.lock``) for the ``with`` block, so
    load-change-save sequences of several processes run one after another."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        yield
        return
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)   # closing releases the lock
