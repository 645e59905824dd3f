"""What a learner has done: completed lessons and quiz scores, kept as JSON in the data dir.

The file lives in ``platformdirs.user_data_dir("radixviz")`` (or ``$RADIXVIZ_DATA_DIR``;
``radixviz serve`` gives each student their own). Reading and checking it is
``progress_file``'s: a damaged record is dropped and reported, the good ones kept; a file
that is not a progress file at all is moved aside (``progress.json.damaged-N``) and
reported; a file that cannot be read (no permission, a FIFO) is left alone and not
overwritten. Writes replace the file at once (temp file + rename) under a lock, so a crash
never leaves half a file and concurrent writers never lose each other's records.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from radixviz.files import ReadError, atomic_write

from .places import ENV_VAR, data_dir  # noqa: F401 - re-exported
from .progress_file import (VERSION, ProgressError, locked, parse_document,  # noqa: F401 - re-exported
                            read_progress_text)

if TYPE_CHECKING:
    from collections.abc import Callable

FILE_NAME = "progress.json"
MAX_SCORES = 1000        # oldest quiz scores are dropped beyond this


@dataclass
class Progress:
    # lesson id -> {"completed": iso time, "title": str, "predicted": [right, asked]}
    lessons: dict = field(default_factory=dict)
    scores: list = field(default_factory=list)      # {"when", "score", "total", "difficulty", "lesson", "seed"}
    challenges: dict = field(default_factory=dict)  # challenge id -> {"solved", "ops", "seen_solution", "when"}
    path: Path | None = None
    warning: str | None = None                      # what was wrong with the file, to show the learner
    # lesson id -> {"block": index of the last block played, "predicted": [right, asked]}
    # for a lesson left before its end, so opening it again can resume there
    positions: dict = field(default_factory=dict)
    # the file could not be read (no permission, not a regular file): never write over it
    read_only: bool = False
    # the text of a file some records were dropped from: kept aside before the next save
    damaged_text: str | None = None

    # ---------------------------------------------------------------- load / save

    @classmethod
    def load(cls, path: Path | None = None) -> Progress:
        """The saved progress, or an empty one; ``warning`` says what was wrong with the file."""
        path = Path(path) if path else data_dir() / FILE_NAME
        try:
            text = read_progress_text(path)
            if text is None:
                return cls(path=path)
            document = parse_document(text)
        except ReadError as exc:
            return cls(path=path, read_only=True,
                       warning=f"cannot read your progress file {path} ({exc}): it is left as it is, "
                               "and nothing is saved to it until it can be read")
        except ProgressError as exc:
            return cls(path=path, warning=f"progress file {path} is damaged ({exc}); "
                                          f"{_move_aside(path)}, starting afresh")
        progress = cls(document.lessons, document.scores, document.challenges, path,
                       positions=document.positions)
        if document.dropped:
            progress.damaged_text = text
            more = f" and {len(document.dropped) - 1} more" if len(document.dropped) > 1 else ""
            progress.warning = (f"progress file {path}: {len(document.dropped)} damaged record(s) skipped "
                                f"({document.dropped[0]}{more}); every other record is kept")
        return progress

    def save(self) -> None:
        """Write the file at once (OSError if it cannot be, or was unreadable at load)."""
        assert self.path is not None
        if self.read_only:
            raise PermissionError(f"{self.path} could not be read, so it is not overwritten")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.damaged_text is not None:
            # the records dropped at load are kept, in the original file, beside the new one
            atomic_write(_aside_name(self.path), self.damaged_text)
            self.damaged_text = None
        atomic_write(self.path, self.to_json())

    def to_json(self) -> str:
        return json.dumps({"version": VERSION, "lessons": self.lessons, "scores": self.scores,
                           "challenges": self.challenges, "positions": self.positions},
                          indent=2, ensure_ascii=False) + "\n"

    # ------------------------------------------------------------------ changes

    def complete_lesson(self, lesson_id: str, title: str = "", right: int | None = None,
                        asked: int | None = None) -> None:
        """Mark a lesson completed (the first time stays the date); keep its best prediction score."""
        record = self.lessons.setdefault(lesson_id, {"completed": _now(), "title": title})
        if asked and right is not None:
            best = record.get("predicted")
            if not best or right / asked >= best[0] / max(best[1], 1):
                record["predicted"] = [int(right), int(asked)]
        self.positions.pop(lesson_id, None)

    def remember_position(self, lesson_id: str, block: int, right: int = 0, asked: int = 0,
                          of: int | None = None) -> None:
        """Where a learner left a lesson before its end (resumed when they open it again),
        when, and of how many predictions (``of``: the teacher's report shows the place)."""
        self.positions[lesson_id] = {"block": int(block), "predicted": [int(right), int(asked)], "when": _now()}
        if of is not None:
            self.positions[lesson_id]["of"] = int(of)

    def prediction_score(self, lesson_id: str) -> tuple[int, int] | None:
        """(right, asked) of the lesson's best completed run, when it asked anything."""
        score = self.lessons.get(lesson_id, {}).get("predicted")
        return tuple(score) if score else None

    def record_score(self, score: int, total: int, difficulty: str, lesson=None, seed=None) -> None:
        self.scores.append({"when": _now(), "score": int(score), "total": int(total),
                            "difficulty": difficulty, "lesson": lesson, "seed": seed})
        del self.scores[:-MAX_SCORES]

    def solve_challenge(self, challenge_id: str, ops: int) -> None:
        """Record a solve; the fewest operations over all solves is kept."""
        record = self.challenges.setdefault(challenge_id, {})
        best = record.get("ops") if record.get("solved") else None
        record.update(solved=True, ops=int(ops) if best is None else min(best, int(ops)), when=_now())

    def see_solution(self, challenge_id: str) -> None:
        """The learner asked for the solution: the challenge counts as seen, not solved."""
        self.challenges.setdefault(challenge_id, {}).update(seen_solution=True)
        self.challenges[challenge_id].setdefault("when", _now())

    def reset(self) -> None:
        self.lessons, self.scores, self.challenges, self.positions = {}, [], {}, {}

    def merge(self, text: str) -> tuple[int, int, list]:
        """Add another file's progress (ProgressError if it is not one at all): return
        (lessons added, scores added, a line per damaged record skipped)."""
        theirs = parse_document(text)
        if theirs.bad_times:        # a time is a time: such a file is refused whole, not trimmed
            raise ProgressError(theirs.bad_times[0])
        new_lessons = [k for k in theirs.lessons if k not in self.lessons]
        for key in new_lessons:
            self.lessons[key] = theirs.lessons[key]
        known = {json.dumps(s, sort_keys=True) for s in self.scores}
        new_scores = [s for s in theirs.scores if json.dumps(s, sort_keys=True) not in known]
        self.scores = sorted(self.scores + new_scores, key=lambda s: s["when"])[-MAX_SCORES:]
        for key, record in theirs.challenges.items():
            mine = self.challenges.setdefault(key, {})
            if record.get("solved"):
                ops = [r["ops"] for r in (mine, record) if r.get("solved")]
                mine.update(solved=True, ops=min(ops))
            if record.get("seen_solution"):
                mine["seen_solution"] = True
            mine.setdefault("when", record.get("when", _now()))
        return len(new_lessons), len(new_scores), theirs.dropped

    @property
    def best_scores(self) -> dict:
        """Per (lesson or 'all', difficulty): the best fraction right."""
        best: dict = {}
        for s in self.scores:
            key = (s.get("lesson") or "all", s["difficulty"])
            if s["total"]:
                best[key] = max(best.get(key, 0.0), s["score"] / s["total"])
        return best


def save_lesson_completed(lesson, right: int | None = None, asked: int | None = None) -> tuple[bool, list[str]]:
    """Record ``lesson`` as completed, with how many of its predictions were right:
    (whether it was saved, warning lines to show)."""
    return update_progress(lambda p: p.complete_lesson(lesson.id, lesson.title, right, asked))


def mark_lesson_completed(lesson, right: int | None = None, asked: int | None = None) -> str | None:
    """``save_lesson_completed`` for the app's lesson player: the last warning, or None."""
    _, warnings = save_lesson_completed(lesson, right, asked)
    return warnings[-1] if warnings else None


def save_lesson_position(lesson, block: int, right: int = 0, asked: int = 0) -> str | None:
    """Remember where the app's player left ``lesson``: the last warning, or None."""
    of = getattr(lesson, "predictions", None)      # a Lesson's (lesson/model.py)
    _, warnings = update_progress(lambda p: p.remember_position(lesson.id, block, right, asked, of))
    return warnings[-1] if warnings else None


def update_progress(change: Callable[[Progress], object], path: Path | None = None) -> tuple[bool, list[str]]:
    """Load, ``change(progress)`` and save, holding the file's lock throughout so that
    processes finishing at once all keep their records: (whether it was saved, warning
    lines to show)."""
    path = Path(path) if path else data_dir() / FILE_NAME
    warnings: list[str] = []
    try:
        with locked(path):
            progress = Progress.load(path)
            warnings += [progress.warning] if progress.warning else []
            change(progress)
            progress.save()
    except OSError as exc:
        return False, warnings + [f"could not save your progress: {exc}"]
    return True, warnings


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _move_aside(path: Path) -> str:
    """Rename a damaged file out of the way; say where it went (or that it stayed)."""
    aside = _aside_name(path)
    try:
        path.replace(aside)
    except OSError:
        return "left in place"
    return f"moved to {aside}"


def _aside_name(path: Path) -> Path:
    n = 1
    while path.with_name(f"{path.name}.damaged-{n}").exists():
        n += 1
    return path.with_name(f"{path.name}.damaged-{n}")
