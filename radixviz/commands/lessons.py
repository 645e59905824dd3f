"""``radixviz lessons``: list the lessons, check them, or read one in plain text."""
from __future__ import annotations

from typing import TYPE_CHECKING

import sys
from pathlib import Path

from radixviz.errors import UsageError
from radixviz.lessons import (LessonError, check_lesson, find_lesson, lesson_files, load_lessons,
                              shipped_lessons_dir)
from radixviz.lessons.challenges.challenge import challenge_files, check_challenge, load_challenges
from radixviz.lessons.progress import Progress, save_lesson_completed
from radixviz.lessons.lesson.reader import read_plain

if TYPE_CHECKING:
    from radixviz.lessons import Lesson
    from radixviz.lessons.progress import Progress
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("lessons", help="list the lessons, or check lesson files (--check)",
                              description="Lessons are Markdown files with ```radixviz operation blocks "
                              "and ```predict pauses; see lessons/README.md for the format.")
    p.add_argument("--lessons", action="append", default=[], metavar="DIR", help="add your own lessons from DIR")
    p.add_argument("--check", nargs="?", const="", metavar="DIR",
                   help="validate every lesson (or those in DIR) and run every operation; exit 1 on a problem")
    p.add_argument("--read", metavar="N", help="read lesson N (number or id) in plain text, "
                   "answering its predictions on standard input")
    p.add_argument("--done", metavar="N", help="mark lesson N as completed in your progress")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.check is not None:
        return check(args.check, args.lessons)
    lessons = load_or_refuse(args.lessons)
    if args.read is not None:
        return read_plain(pick_lesson(lessons, args.read), sys.stdin, sys.stdout)
    if args.done is not None:
        lesson = pick_lesson(lessons, args.done)
        saved, warnings = save_lesson_completed(lesson)
        for warning in warnings:
            print(f"radixviz: {warning}", file=sys.stderr)
        if not saved:
            return 1
        print(f"lesson {lesson.number} ({lesson.title}) marked as completed")
        return 0
    progress = _progress()
    done = progress.lessons
    for lesson in lessons:
        mark = "✓" if lesson.id in done else " "
        origin = "" if lesson.shipped else f"   [{lesson.path.parent}]"
        print(f"{mark} {lesson.number:>2}. {lesson.title}  ({lesson.id}, {len(lesson.operations)} operations)"
              f"{lesson_score_note(progress, lesson)}{origin}")
    print(f"\n{len(lessons)} lessons, {sum(l.id in done for l in lessons)} completed. "
          "Read one with: radixviz lessons --read N")
    return 0


def lesson_score_note(progress: Progress, lesson: Lesson) -> str:
    """`` · predicted 5/6`` for a completed lesson, `` · left at page 3 of 8`` for one in progress."""
    score = progress.prediction_score(lesson.id)
    if score:
        return f" · predicted {score[0]}/{score[1]}"
    where = progress.positions.get(lesson.id)
    return f" · left at {lesson.place_of(where['block'])}" if where and lesson.id not in progress.lessons else ""


def check(directory: str, extra: list) -> int:
    """Print ``FILE:LINE: message`` for every problem; 0 when all pass, 1 otherwise."""
    dirs = [Path(d) for d in ([directory] if directory else []) + list(extra)]
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"no such lesson folder: {d}")
    only_dir = bool(directory)
    shipped = shipped_lessons_dir()
    if only_dir and Path(directory).resolve() == shipped.resolve():
        dirs, only_dir = dirs[1:], False   # checking the shipped folder itself
    if only_dir and not (lesson_files(Path(directory)) or challenge_files(Path(directory))):
        raise UsageError(f"no lesson or challenge files (*.md) in {directory}")
    problems: list = []
    lessons = load_lessons(dirs, problems=problems)
    challenges = load_challenges(dirs, problems=problems)
    if only_dir:   # report only the folder asked about (shipped lessons are still loaded to catch clashes)
        wanted = Path(directory).resolve()
        lessons = [l for l in lessons if l.path.resolve().parent == wanted]
        challenges = [c for c in challenges if c.path.resolve().parent == wanted]
    operations = 0
    for lesson in lessons:
        problems.extend(check_lesson(lesson))
        operations += len(lesson.operations)
    for challenge in challenges:
        problems.extend(check_challenge(challenge))
    for problem in problems:
        print(problem)
    files = len({str(l.path) for l in lessons} | {str(c.path) for c in challenges} | {p.file for p in problems})
    verdict = "all pass" if not problems else f"{len(problems)} problem(s)"
    print(f"checked {files} lesson file(s) ({len(challenges)} challenge(s), each solution played), "
          f"ran {operations} operation(s): {verdict}", file=sys.stderr)
    return 1 if problems else 0


def _check_command(file: str) -> str:
    """The --check that lists every problem of the folder ``file`` is in."""
    folder = Path(file).parent
    if folder.resolve() == shipped_lessons_dir().resolve():
        return "radixviz lessons --check"
    return f"radixviz lessons --check {folder}"


def load_or_refuse(extra_dirs=()) -> list:
    """The shipped lessons and those in ``extra_dirs``; a missing folder or a bad lesson
    file is a UsageError (one line, with the command that lists every problem)."""
    try:
        return load_lessons(extra_dirs)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    except LessonError as exc:
        raise UsageError(f"{exc} (every problem: {_check_command(exc.file)})") from None


def pick_lesson(lessons: list, wanted: str):
    """The lesson ``wanted`` names (``1``, ``01``, its id or file name: ``find_lesson``, the
    one lookup every command uses); UsageError listing the lessons otherwise."""
    try:
        return find_lesson(lessons, wanted)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None


def _progress():
    progress = Progress.load()
    if progress.warning:
        print(f"radixviz: {progress.warning}", file=sys.stderr)
    return progress
