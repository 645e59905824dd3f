"""What a learner has done: completed lessons and quiz scores, kept as JSON in the data dir.

The file lives in ``platformdirs.user_data_dir("radixviz")`` (or ``$RADIXVIZ_DATA_DIR``).
Writes go to a temporary file first and then replace the old one, so a crash never leaves
half a file. A damaged file is moved aside (``progress.json.damaged-N``) and reported through
``Progress.warning``; the learner starts afresh instead of seeing a crash.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

ENV_VAR = "RADIXVIZ_DATA_DIR"
FILE_NAME = "progress.json"
VERSION = 1
MAX_SCORES = 1000        # oldest quiz scores are dropped beyond this


class ProgressError(Exception):
    """A progress file that cannot be used (for ``--import``): one line."""


def data_dir() -> Path:
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    import platformdirs
    return Path(platformdirs.user_data_dir("radixviz", appauthor=False))


@dataclass
class Progress:
    # lesson id -> {"completed": iso time, "title": str, "predicted": [right, asked]}
    lessons: dict = field(default_factory=dict)
    scores: list = field(default_factory=list)      # {"when", "score", "total", "difficulty", "lesson", "seed"}
    challenges: dict = field(default_factory=dict)  # challenge id -> {"solved", "ops", "seen_solution", "when"}
    path: Path | None = None
    warning: str | None = None                      # set when a damaged file was moved aside
    # lesson id -> {"block": index of the last block played, "predicted": [right, asked]}
    # for a lesson left before its end, so opening it again can resume there
    positions: dict = field(default_factory=dict)

    # ---------------------------------------------------------------- load / save

    @classmethod
    def load(cls, path: Path | None = None) -> "Progress":
        """The saved progress, or an empty one (a damaged file is moved aside and reported)."""
        path = Path(path) if path else data_dir() / FILE_NAME
        if not path.exists():
            return cls(path=path)
        try:
            text = path.read_text(encoding="utf-8")
            lessons, scores = parse_progress(text)
            challenges = parse_challenges(text)
            positions = parse_positions(text)
        except (OSError, UnicodeDecodeError, ProgressError) as exc:
            aside = _aside_name(path)
            try:
                path.replace(aside)
                where = f"moved to {aside}"
            except OSError:
                where = "left in place"
            return cls(path=path, warning=f"progress file {path} is damaged ({exc}); {where}, starting afresh")
        return cls(lessons, scores, challenges, path, positions=positions)

    def save(self) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + f".tmp-{os.getpid()}")
        tmp.write_text(self.to_json(), encoding="utf-8")
        os.replace(tmp, self.path)

    def to_json(self) -> str:
        return json.dumps({"version": VERSION, "lessons": self.lessons, "scores": self.scores,
                           "challenges": self.challenges, "positions": self.positions},
                          indent=2, ensure_ascii=False) + "\n"

    # ------------------------------------------------------------------ changes

    def complete_lesson(self, lesson_id: str, title: str = "", right: int | None = None,
                        asked: int | None = None) -> None:
        """Mark a lesson completed (the first time stays the date); keep its best prediction score."""
        record = self.lessons.setdefault(lesson_id, {"completed": _now(), "title": title})
        if asked:
            best = record.get("predicted")
            if not best or right / asked >= best[0] / max(best[1], 1):
                record["predicted"] = [int(right), int(asked)]
        self.positions.pop(lesson_id, None)

    def remember_position(self, lesson_id: str, block: int, right: int = 0, asked: int = 0) -> None:
        """Where a learner left a lesson before its end (resumed when they open it again)."""
        self.positions[lesson_id] = {"block": int(block), "predicted": [int(right), int(asked)]}

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

    def merge(self, text: str) -> tuple[int, int]:
        """Add another file's progress (ProgressError if it is not one); return (lessons, scores) added."""
        lessons, scores = parse_progress(text)
        new_lessons = [k for k in lessons if k not in self.lessons]
        for key in new_lessons:
            self.lessons[key] = lessons[key]
        known = {json.dumps(s, sort_keys=True) for s in self.scores}
        new_scores = [s for s in scores if json.dumps(s, sort_keys=True) not in known]
        self.scores = sorted(self.scores + new_scores, key=lambda s: s["when"])[-MAX_SCORES:]
        for key, theirs in parse_challenges(text).items():
            mine = self.challenges.setdefault(key, {})
            if theirs.get("solved"):
                ops = [r["ops"] for r in (mine, theirs) if r.get("solved")]
                mine.update(solved=True, ops=min(ops))
            if theirs.get("seen_solution"):
                mine["seen_solution"] = True
            mine.setdefault("when", theirs.get("when", _now()))
        return len(new_lessons), len(new_scores)

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
    return _change(lambda p: p.complete_lesson(lesson.id, lesson.title, right, asked))


def mark_lesson_completed(lesson, right: int | None = None, asked: int | None = None) -> str | None:
    """``save_lesson_completed`` for the app's lesson player: the last warning, or None."""
    _, warnings = save_lesson_completed(lesson, right, asked)
    return warnings[-1] if warnings else None


def save_lesson_position(lesson, block: int, right: int = 0, asked: int = 0) -> str | None:
    """Remember where the app's player left ``lesson``: the last warning, or None."""
    _, warnings = _change(lambda p: p.remember_position(lesson.id, block, right, asked))
    return warnings[-1] if warnings else None


def _change(change) -> tuple[bool, list[str]]:
    progress = Progress.load()
    warnings = [progress.warning] if progress.warning else []
    change(progress)
    try:
        progress.save()
    except OSError as exc:
        return False, warnings + [f"could not save your progress: {exc}"]
    return True, warnings


def parse_progress(text: str) -> tuple[dict, list]:
    """Validate a progress file's text; ProgressError names what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProgressError(f"not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise ProgressError(f"not a radixviz progress file (expected version {VERSION})")
    lessons, scores = data.get("lessons", {}), data.get("scores", [])
    if not isinstance(lessons, dict) or not all(isinstance(v, dict) for v in lessons.values()):
        raise ProgressError("'lessons' must map lesson ids to records")
    if not isinstance(scores, list):
        raise ProgressError("'scores' must be a list")
    for s in scores:
        if not (isinstance(s, dict) and isinstance(s.get("score"), int) and isinstance(s.get("total"), int)
                and isinstance(s.get("when"), str) and isinstance(s.get("difficulty"), str)
                and 0 <= s["score"] <= s["total"]):
            raise ProgressError(f"bad score record {json.dumps(s)[:60]}")
    return lessons, scores


def parse_positions(text: str) -> dict:
    """Where lessons were left before their end (older files have none); ProgressError if bad."""
    data = json.loads(text)
    positions = data.get("positions", {}) if isinstance(data, dict) else {}
    if not isinstance(positions, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("block"), int) for v in positions.values()):
        raise ProgressError("'positions' must map lesson ids to {\"block\": N}")
    return positions


def parse_challenges(text: str) -> dict:
    """The challenge records of a progress file (older files have none); ProgressError if bad."""
    data = json.loads(text)
    challenges = data.get("challenges", {}) if isinstance(data, dict) else {}
    if not isinstance(challenges, dict):
        raise ProgressError("'challenges' must map challenge ids to records")
    for key, record in challenges.items():
        if not isinstance(record, dict) or (record.get("solved") and not isinstance(record.get("ops"), int)):
            raise ProgressError(f"bad challenge record for {key!r}")
    return challenges


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _aside_name(path: Path) -> Path:
    n = 1
    while path.with_name(f"{path.name}.damaged-{n}").exists():
        n += 1
    return path.with_name(f"{path.name}.damaged-{n}")
