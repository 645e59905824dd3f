"""The students of a served class: who joined, each one's own folder, and the class report.

A class lives in one folder (``radixviz serve --class-dir``, by default ``classroom`` in
radixviz's data folder): ``students.json`` names each student, and ``students/ID/`` holds
that student's progress, autosaves and scripts. The ID is a long random key: it is the
student's cookie and personal link, so it must stay secret to the student and the teacher.
The teacher's own progress file is never read or written here.
"""
from __future__ import annotations

import calendar
import csv
import io
import json
import re
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from radixviz.files import ReadError, atomic_write, read_text, strip_controls
from radixviz.lessons.progress import Progress
from radixviz.lessons.progress.progress_file import locked

from .names import NameRefused, name_keys, shown_name

ROSTER = "students.json"
MAX_NAME = 40
MAX_STUDENTS = 2000          # the most ``--max-students`` allows
DEFAULT_STUDENTS = 60        # a real class (``serve --max-students``' default)
_ID = re.compile(r"[A-Za-z0-9_-]{20,64}")


class RosterError(Exception):
    """A name that cannot join (empty, taken, the class is full): one line to show."""


KEY_DAYS = 30               # a personal link lasts this long after it is issued (serve --key-days)
STAMP = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True)
class Student:
    id: str
    name: str
    joined: str
    issued: str = ""        # when this key was issued (its join, or the teacher's "new link")


def stamp_seconds(text: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(text, STAMP)))
    except (ValueError, OverflowError):
        return None


class Roster:
    """The class's students, kept in ``folder/students.json`` (written atomically, locked)."""

    def __init__(self, folder: Path, max_students: int = MAX_STUDENTS, key_days: int | None = None) -> None:
        self.folder = Path(folder)
        self.path = self.folder / ROSTER
        self.max_students = max_students
        self.key_days = key_days            # None: keys never expire (the report from the shell)

    def is_expired(self, student: Student) -> bool:
        """A key older than ``key_days`` (one with no readable date counts as expired)."""
        if self.key_days is None:
            return False
        issued = stamp_seconds(student.issued or student.joined)
        return issued is None or time.time() - issued > self.key_days * 86400

    def expired(self, student_id: str | None) -> Student | None:
        """The student whose key this is, if it has expired (to say so, not "unknown")."""
        found = self._load().get(student_id or "") if _ID.fullmatch(student_id or "") else None
        return found if found is not None and self.is_expired(found) else None

    def students(self) -> list[Student]:
        """Every student, in the order they joined."""
        return list(self._load().values())

    def get(self, student_id: str | None) -> Student | None:
        """The student with this ID (a cookie or a link), or None."""
        if not student_id or not _ID.fullmatch(student_id):
            return None
        found = self._load().get(student_id)
        return None if found is None or self.is_expired(found) else found

    def rekey(self, student_id: str) -> Student | None:
        """A fresh key for this student (the old one stops working at once); their folder,
        and so their progress, moves with them. None if there is no such student."""
        with locked(self.path):
            roster = self._load()
            old = roster.get(student_id) if _ID.fullmatch(student_id or "") else None
            if old is None:
                return None
            new = Student(secrets.token_urlsafe(18), old.name, old.joined, time.strftime(STAMP, time.gmtime()))
            if self.home(old).exists():
                self.home(old).rename(self.home(new))
            roster = {(new.id if k == old.id else k): (new if k == old.id else v) for k, v in roster.items()}
            self._save(roster)
        return new

    def join(self, typed_name: str) -> Student:
        """A new student called ``typed_name``; RosterError when the name cannot be used."""
        name = clean_name(typed_name)
        with locked(self.path):
            roster = self._load()
            keys = name_keys(name)
            if any(keys & name_keys(s.name) for s in roster.values()):
                raise RosterError(f"{name} is already in this class: if that is you, open your personal "
                                  "link; otherwise add an initial")
            if len(roster) >= self.max_students:
                raise RosterError(f"this class already has {self.max_students} students: ask your teacher")
            now = time.strftime(STAMP, time.gmtime())
            student = Student(secrets.token_urlsafe(18), name, now, now)
            roster[student.id] = student
            self._save(roster)
        self.home(student).mkdir(parents=True, exist_ok=True)
        return student

    def remove(self, student_id: str) -> Student | None:
        """Take the student out of the class (their name is free again) and delete their
        folder; None if there is no such student."""
        with locked(self.path):
            roster = self._load()
            student = roster.pop(student_id, None) if _ID.fullmatch(student_id or "") else None
            if student is None:
                return None
            self._save(roster)
        shutil.rmtree(self.home(student), ignore_errors=True)
        return student

    def _save(self, roster: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps({s.id: {"name": s.name, "joined": s.joined, "issued": s.issued}
                                            for s in roster.values()}, indent=2, ensure_ascii=False) + "\n")

    def home(self, student: Student) -> Path:
        """The student's own folder: their progress, autosaves and scripts."""
        return self.folder / "students" / student.id

    def _load(self) -> dict:
        try:
            data = json.loads(read_text(self.path, 5_000_000))
        except (ReadError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {key: Student(key, str(value.get("name", "?"))[:MAX_NAME], str(value.get("joined", "")),
                             str(value.get("issued", "")))
                for key, value in data.items()
                if isinstance(value, dict) and isinstance(key, str) and _ID.fullmatch(key)}


def clean_name(typed: str) -> str:
    """A student's name as shown: control and format characters dropped, look-alikes
    folded (``shown_name``), spaces collapsed, at most ``MAX_NAME`` characters;
    RosterError when nothing is left or the name mixes scripts."""
    try:
        folded = shown_name(strip_controls(typed))
    except NameRefused as exc:
        raise RosterError(str(exc)) from None
    name = " ".join(folded.split())[:MAX_NAME]
    if not name:
        raise RosterError("type your name (at most 40 characters)")
    return name


# ------------------------------------------------------------------------ the report

REPORT_COLUMNS = ("name", "lessons_completed", "predictions_right", "predictions_asked",
                  "challenges_solved", "quizzes_taken", "best_quiz_percent", "lessons", "challenges")


def class_rows(roster: Roster) -> list[dict]:
    """One row per student: what their own progress file says (never the teacher's)."""
    rows = []
    for student in roster.students():
        progress = Progress.load(roster.home(student) / "progress.json")
        predicted = [r["predicted"] for r in progress.lessons.values() if "predicted" in r]
        solved = sorted(k for k, r in progress.challenges.items() if r.get("solved"))
        best = max((s["score"] / s["total"] for s in progress.scores if s["total"]), default=None)
        rows.append({
            "name": student.name,
            "lessons_completed": len(progress.lessons),
            "predictions_right": sum(p[0] for p in predicted),
            "predictions_asked": sum(p[1] for p in predicted),
            "challenges_solved": len(solved),
            "quizzes_taken": len(progress.scores),
            "best_quiz_percent": "" if best is None else round(100 * best),
            "lessons": " ".join(sorted(progress.lessons)),
            "challenges": " ".join(solved),
            "warning": progress.warning or "",
            "id": student.id,
            "positions": progress.positions,            # where they are in a lesson (live.py)
            "challenge_records": progress.challenges,
        })
    return rows


def report_csv(rows: list[dict]) -> str:
    """The report as CSV (the columns of REPORT_COLUMNS), for a spreadsheet."""
    out = io.StringIO()
    writer = csv.DictWriter(out, REPORT_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: csv_cell(v) for k, v in row.items()})
    return out.getvalue()


def csv_cell(value: object):
    """``value`` as a spreadsheet should read it: a text starting with = + - @ (or a tab or
    carriage return before one) would run as a formula, so it gets a leading quote; an
    empty text stays empty (``""[:1] in "=+-@"`` is true: every empty cell was a lone ')."""
    if isinstance(value, str) and value and value[0] in "=+-@\t\r":
        return "'" + value
    return value


def report_text(rows: list[dict], folder: Path) -> str:
    """The report as a table for the terminal."""
    if not rows:
        return f"No student has joined the class in {folder} yet."
    width = max(len("student"), *(len(r["name"]) for r in rows))
    lines = [f"Class in {folder}: {len(rows)} student(s)", "",
             f"{'student':<{width}}  lessons  predicted  challenges  quizzes  best quiz"]
    for r in rows:
        predicted = f"{r['predictions_right']}/{r['predictions_asked']}" if r["predictions_asked"] else "-"
        best = f"{r['best_quiz_percent']}%" if r["best_quiz_percent"] != "" else "-"
        lines.append(f"{r['name']:<{width}}  {r['lessons_completed']:>7}  {predicted:>9}  "
                     f"{r['challenges_solved']:>10}  {r['quizzes_taken']:>7}  {best:>9}")
    return "\n".join(lines)
