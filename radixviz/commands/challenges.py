"""``radixviz challenges`` lists the challenges; ``radixviz challenge ID`` shows or grades one."""
from __future__ import annotations

from typing import TYPE_CHECKING

import argparse
import sys
from pathlib import Path

from rich.console import Console

from radixviz.errors import UsageError
from radixviz.files import ReadError, read_text
from radixviz.lessons import LessonError
from radixviz.lessons.challenges.challenge import (AttemptError, attempt, find_challenge, load_challenges,
                                        start_session)
from radixviz.lessons.progress import Progress, update_progress
from radixviz.render.tree import TreeView
from radixviz.script.parser import MAX_SCRIPT_BYTES

if TYPE_CHECKING:
    from radixviz.lessons.challenges.challenge import Challenge
    from radixviz.lessons.progress import Progress


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("challenges", help="list the challenges with your status",
                              description="Challenges give a goal and a sandbox; the engine judges "
                              "what you build. Play them in the app, or grade a script with "
                              "'radixviz challenge ID --check FILE'.")
    p.add_argument("--lessons", action="append", default=[], metavar="DIR",
                   help="add your own challenges from DIR")
    p.set_defaults(func=run_list)

    p = subparsers.add_parser("challenge", help="show a challenge, or grade your solution script",
                              description="Without an option, the same as --show.")
    p.add_argument("id", metavar="ID", help="the challenge's id or number")
    p.add_argument("--lessons", action="append", default=[], metavar="DIR",
                   help="add your own challenges from DIR")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--show", action="store_true", help="print the goal and the starting state")
    action.add_argument("--check", metavar="SCRIPT",
                        help="run SCRIPT (a file, or - for standard input) after the start and grade it: "
                        "exit 0 solved, 1 not solved, 2 bad input")
    action.add_argument("--hint", type=_hint_number, metavar="N", help="print hint N (from 1)")
    action.add_argument("--solution", action="store_true",
                        help="print the reference solution (the challenge then counts as seen, not solved)")
    p.set_defaults(func=run_one)


def _hint_number(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"hint number must be 1 or more, not {text!r}")
    return int(text)


def run_list(args: argparse.Namespace) -> int:
    challenges = _load(args.lessons)
    progress = _progress()
    solved = 0
    for c in challenges:
        record = progress.challenges.get(c.id, {})
        if record.get("solved"):
            solved += 1
            status = f"✓ solved in {record['ops']} (par {c.par})"
        elif record.get("seen_solution"):
            status = "· solution seen"
        else:
            status = f"  par {c.par}"
        origin = "" if c.shipped else f"   [{c.path.parent}]"
        print(f"{c.number:>2}. {c.id:<16} {c.level:<6}  {c.title:<48} {status}{origin}")
    print(f"\n{len(challenges)} challenges, {solved} solved. "
          "Show one with: radixviz challenge ID --show")
    return 0


def run_one(args: argparse.Namespace) -> int:
    challenge = _pick(_load(args.lessons), args.id)
    if args.check is not None:
        return _check(challenge, args.check)
    if args.hint is not None:
        if args.hint > len(challenge.hints):
            _usage(f"{challenge.id} has {len(challenge.hints)} hints")
        print(f"hint {args.hint} of {len(challenge.hints)}: {challenge.hints[args.hint - 1]}")
        return 0
    if args.solution:
        _record(challenge.id, seen=True)
        print(challenge.solution)
        return 0
    show(challenge)
    return 0


def show(challenge: Challenge) -> None:
    print(f"{challenge.title}  ({challenge.id}, {challenge.level}, par {challenge.par})\n")
    print(challenge.statement + "\n")
    print("Goal:")
    for condition in challenge.goal:
        print(f"  - {condition.words}   [{condition.text}]")
    print(f"\nAllowed operations: {', '.join(challenge.allow)}")
    if challenge.start:

        print("\nStarting state:")
        for line in challenge.start.splitlines():
            print(f"  {line}")
        session, _ = start_session(challenge)
        Console(highlight=False).print(TreeView(session.live_frame().tree, legend=False))
    else:
        print("\nStarting state: an empty cache")
    print(f"\nHints: {len(challenge.hints)} (radixviz challenge {challenge.id} --hint 1)")


def _check(challenge: Challenge, source: str) -> int:
    try:
        text = sys.stdin.read(MAX_SCRIPT_BYTES + 1) if source == "-" else read_text(source, MAX_SCRIPT_BYTES)
    except (OSError, UnicodeDecodeError, ReadError) as exc:
        _usage(f"cannot read {source}: {getattr(exc, 'strerror', None) or exc}")
    if len(text) > MAX_SCRIPT_BYTES:
        _usage(f"cannot read {source}: file too large (over {MAX_SCRIPT_BYTES:,} bytes)")
    try:
        verdict = attempt(challenge, text, "<stdin>" if source == "-" else source)
    except AttemptError as exc:
        _usage(str(exc))
    for check in verdict.checks:
        print(f"  {check}")
    if not verdict.solved:
        print(f"not solved: {len(verdict.missing)} of {len(verdict.checks)} conditions not met")
        return 1
    par = "at par" if verdict.ops_used == challenge.par else \
        f"par is {challenge.par}" if verdict.ops_used > challenge.par else f"under par {challenge.par}!"
    print(f"solved in {verdict.ops_used} operations ({par})")
    if challenge.debrief:
        print("\n" + verdict.debrief(challenge))
    _record(challenge.id, ops=verdict.ops_used)
    return 0


def _record(challenge_id: str, ops: int | None = None, seen: bool = False) -> None:
    def change(progress):
        if seen:
            progress.see_solution(challenge_id)
        else:
            progress.solve_challenge(challenge_id, ops)
    for warning in update_progress(change)[1]:
        print(f"radixviz: {warning}", file=sys.stderr)


def _load(dirs):
    for d in dirs:
        if not Path(d).is_dir():
            _usage(f"no such folder: {d}")
    try:
        return load_challenges(dirs)
    except LessonError as exc:
        _usage(f"{exc} (every problem: radixviz lessons --check)")


def _pick(challenges: list[Challenge], wanted):
    try:
        return find_challenge(challenges, wanted)
    except KeyError as exc:
        _usage(exc.args[0])


def _progress():
    progress = Progress.load()
    if progress.warning:
        print(f"radixviz: {progress.warning}", file=sys.stderr)
    return progress


def _usage(message: str):
    raise UsageError(message)
