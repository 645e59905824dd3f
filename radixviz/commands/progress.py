"""``radixviz progress``: completed lessons and quiz scores; reset, export, import."""
from __future__ import annotations

from typing import TYPE_CHECKING

import sys
from pathlib import Path

from radixviz.errors import UsageError
from radixviz.lessons import LessonError, load_lessons
from radixviz.lessons.challenges.challenge import load_challenges
from radixviz.files import ReadError, atomic_write, read_text
from radixviz.lessons.progress import Progress, ProgressError, update_progress
from radixviz.lessons.progress.progress_file import MAX_PROGRESS_BYTES

if TYPE_CHECKING:
    from radixviz.lessons.progress import Progress
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("progress", help="show completed lessons and quiz scores")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--reset", action="store_true", help="forget all progress")
    group.add_argument("--export", metavar="FILE", help="write your progress to FILE (JSON)")
    group.add_argument("--import", dest="import_file", metavar="FILE", help="add the progress saved in FILE")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.import_file:
        return _import(Path(args.import_file))
    progress = Progress.load()
    if progress.warning:
        print(f"radixviz: {progress.warning}", file=sys.stderr)
    if args.reset:
        progress.reset()
        _save(progress)
        print(f"progress cleared ({progress.path})")
        return 0
    if args.export:
        target = Path(args.export)
        try:
            atomic_write(target, progress.to_json())   # a full disk leaves the old file whole
        except OSError as exc:
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
        print(f"wrote {len(progress.lessons)} completed lessons and {len(progress.scores)} scores to {target}")
        return 0
    show(progress)
    return 0


def _import(source: Path) -> int:
    try:
        text = read_text(source, MAX_PROGRESS_BYTES)
    except ReadError as exc:
        raise UsageError(f"cannot read {source}: {exc}") from None
    added: list = []

    def merge(progress: Progress) -> None:
        try:
            added[:] = progress.merge(text)
        except ProgressError as exc:
            raise UsageError(f"{source}: {exc}; your progress is unchanged") from None
    saved, warnings = update_progress(merge)
    for warning in warnings:
        print(f"radixviz: {warning}", file=sys.stderr)
    if not saved:
        return 1
    lessons, scores, skipped = added
    note = f" ({len(skipped)} damaged record(s) skipped: {skipped[0]})" if skipped else ""
    print(f"imported {lessons} completed lessons and {scores} scores from {source}{note}")
    return 0


def _save(progress: Progress) -> None:
    try:
        progress.save()
    except OSError as exc:
        raise UsageError(f"cannot write {progress.path}: {exc.strerror or exc}; nothing was changed") from None


def show(progress: Progress) -> None:
    try:
        lessons = {l.id: l for l in load_lessons()}
    except LessonError:
        lessons = {}
    titles = {key: (l.number, l.title) for key, l in lessons.items()}
    print(f"Progress ({progress.path})")
    total = len(titles)
    done = [k for k in progress.lessons if k in titles]
    print(f"\nLessons completed: {len(done)}/{total}")
    for lesson_id in sorted(progress.lessons, key=lambda k: titles.get(k, (99, k))):
        number, title = titles.get(lesson_id, ("?", progress.lessons[lesson_id].get("title") or lesson_id))
        score = progress.prediction_score(lesson_id)
        predicted = f", predicted {score[0]}/{score[1]}" if score else ""
        print(f"  ✓ {number}. {title}  ({progress.lessons[lesson_id].get('completed', '')}{predicted})")
    for lesson_id in sorted(set(progress.positions) - set(progress.lessons), key=lambda k: titles.get(k, (99, k))):
        number, title = titles.get(lesson_id, ("?", lesson_id))
        block = progress.positions[lesson_id]["block"]
        place = lessons[lesson_id].place_of(block) if lesson_id in lessons else f"part {block + 1}"
        print(f"  … {number}. {title}  (in progress: left at {place})")
    _show_challenges(progress)
    print(f"\nQuizzes taken: {len(progress.scores)}")
    for s in progress.scores[-10:]:
        scope = f"lesson {s['lesson']}" if s.get("lesson") else "all lessons"
        print(f"  {s['when']}  {s['score']}/{s['total']}  {s['difficulty']}, {scope}, seed {s.get('seed')}")
    if progress.scores:
        # a score is out of all the quiz's questions: skipped ones count as not right
        best = max(s["score"] / s["total"] for s in progress.scores if s["total"])
        print(f"  best: {best:.0%}")


def _show_challenges(progress: Progress) -> None:
    try:
        challenges = {c.id: c for c in load_challenges()}
    except LessonError:
        challenges = {}
    solved = {k: r for k, r in progress.challenges.items() if r.get("solved")}
    print(f"\nChallenges solved: {len(solved)}/{len(challenges)}")
    for key, record in progress.challenges.items():
        known = challenges.get(key)
        title = known.title if known else key
        if record.get("solved"):
            par = f" (par {known.par})" if known else ""
            print(f"  ✓ {key}: {title}  in {record['ops']} operations{par}")
        elif record.get("seen_solution"):
            print(f"  · {key}: {title}  solution seen")
