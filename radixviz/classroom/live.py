"""Where each student is now, for the teacher's report (issue 51): the lesson and prediction
they are at, their last challenge, and when they last did anything.

The place comes from the student's own progress file, which the lesson player writes at
each block (``positions``: the block, the predictions made so far, of how many, and when);
the last keystroke from the server, which sees every one a tab sends; the last challenge
from the challenge records. Nothing here opens a session or reads the teacher's files.
"""
from __future__ import annotations

import calendar
import time
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from radixviz.lessons import LessonError, load_lessons

if TYPE_CHECKING:
    from collections.abc import Sequence

STAMP = "%Y-%m-%dT%H:%M:%SZ"


class Known(NamedTuple):
    number: int
    title: str
    predictions: int


@lru_cache(maxsize=4)
def lesson_index(dirs: tuple[str, ...] = ()) -> dict[str, Known]:
    """The class's lessons (the shipped ones and the teacher's ``--lessons``), by id."""
    try:
        lessons = load_lessons(list(dirs))
    except LessonError:
        return {}
    return {lesson.id: Known(lesson.number, lesson.title, lesson.predictions) for lesson in lessons}


def seconds(stamp: object) -> float | None:
    """A progress file's time as seconds since the epoch, or None."""
    try:
        return float(calendar.timegm(time.strptime(str(stamp), STAMP)))
    except (ValueError, OverflowError):
        return None


def place(positions: dict, index: dict[str, Known]) -> tuple[str, float | None]:
    """("lesson 5 · prediction 2 of 4", when) for the lesson the student was in last, or ("", None)."""
    dated = [(when, key, p) for key, p in positions.items() if (when := seconds(p.get("when"))) is not None]
    if not dated:
        return "", None
    when, key, position = max(dated, key=lambda d: d[0])
    known = index.get(key)
    name = f"lesson {known.number}" if known else f"lesson {key}"
    of = position.get("of", known.predictions if known else 0)
    asked = position.get("predicted", [0, 0])[1]
    if not of:
        return f"{name} · block {position['block'] + 1}", when
    if asked >= of:
        return f"{name} · after its {of} predictions", when
    return f"{name} · prediction {asked + 1} of {of}", when


def last_challenge(challenges: dict) -> tuple[str, float | None]:
    """("challenge whole-tree: solved", when) for the newest challenge record, or ("", None)."""
    dated = [(when, key, r) for key, r in challenges.items() if (when := seconds(r.get("when"))) is not None]
    if not dated:
        return "", None
    when, key, record = max(dated, key=lambda d: d[0])
    state = "solved" if record.get("solved") else "solution seen" if record.get("seen_solution") else "tried"
    return f"challenge {key}: {state}", when


def ago(then: float | None, now: float | None = None) -> str:
    """"now", "4 min ago", "2 h ago", "3 days ago", or "-" when never."""
    if then is None:
        return "-"
    past = max(0.0, (time.time() if now is None else now) - then)
    if past < 60:
        return "now"
    if past < 3600:
        return f"{int(past // 60)} min ago"
    if past < 86400:
        return f"{int(past // 3600)} h ago"
    return f"{int(past // 86400)} days ago"


def live_columns(row: dict, index: dict[str, Known], keystroke: float | None, open_now: bool) -> None:
    """Add the report's live columns to one of ``students.class_rows``' rows: ``now`` (where
    they are), ``active`` (when they last did anything) and ``live`` (a tab open now)."""
    lesson, lesson_at = place(row.get("positions", {}), index)
    challenge, challenge_at = last_challenge(row.get("challenge_records", {}))
    latest = [t for t in (lesson_at, challenge_at) if t is not None]
    row["now"] = lesson if (lesson_at or 0) >= (challenge_at or 0) else challenge
    times: Sequence[float] = [t for t in (keystroke, *latest) if t is not None]
    row["active_at"] = max(times, default=None)
    row["active"] = ago(row["active_at"])
    row["live"] = open_now
