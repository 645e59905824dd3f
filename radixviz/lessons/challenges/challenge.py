"""Challenges: a goal the learner reaches by driving the cache, graded by the engine.

A challenge is a Markdown file like a lesson (see ``lessons/challenges/README.md``)::

    ---
    id: evict-short
    number: 3
    title: Ask for more than you get
    level: medium
    par: 3
    allow: insert lock evict
    ---
    What to do, in words.

    ```start            (optional: played before the learner begins, shown to them)
    insert "abc"
    ```
    ```goal             (conditions, see goals.py)
    evict.freed < evict.asked   # the eviction frees fewer tokens than it asked for
    ```
    ```hint             (any number, revealed one at a time)
    ```
    ```solution         (a reference solution of exactly `par` operations)
    ```
    Prose after the solution is the debrief, shown once the goal is met. It may name
    what the learner's own run measured, ``{evict.freed}`` or ``{total_size}`` (any goal
    subject without a replay prefix), so that it never contradicts what they did.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from radixviz.script.parser import ScriptError, parse_script

from .goals import Check, Condition, GoalError, check_subject, evaluate, parse_goal, run_values, shown
from ..lesson.loader import is_challenge_file, markdown_files, shipped_lessons_dir
from ..markdown_file import FormatError, Prose, read_markdown
from ..lesson.model import LessonError
from ..lesson.parse import read_lesson_text

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ...script.session import Session
    from radixviz.script.parser import Op


LEVELS = ("easy", "medium", "hard")
BLOCKS = ("start", "goal", "hint", "solution")
META = ("id", "number", "title", "level", "par", "allow")
ALLOWED_OPS = ("insert", "match", "lock", "unlock", "evict", "reset", "tokens", "matcher",
               "sync", "auto-sync", "load-back", "evict-host", "write-policy")
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# a debrief's measured value: {evict.freed}, {total_size}
_PLACEHOLDER = re.compile(r"\{([a-z_]+(?:\.[a-z_]+)?)\}")


@dataclass(frozen=True)
class Challenge:
    id: str
    number: int
    title: str
    level: str
    par: int
    allow: tuple               # operation names the learner may use
    statement: str             # the goal in words (Markdown)
    start: str                 # operations played first ("" for an empty cache)
    goal: tuple                # Condition
    hints: tuple               # str, in the order they are revealed
    solution: str              # operations meeting the goal in ``par`` of them
    debrief: str               # Markdown shown after the goal is met
    path: Path
    shipped: bool = True


@dataclass(frozen=True)
class Verdict:
    """How an attempt did: each condition's check, and the operations it used."""
    checks: tuple              # Check
    ops_used: int
    par: int
    values: dict = field(default_factory=dict, compare=False)   # subject -> measured value

    def debrief(self, challenge: Challenge) -> str:
        """The challenge's debrief with each ``{subject}`` replaced by this run's value."""
        def fill(found):
            name = found.group(1)
            return shown(self.values[name]) if name in self.values else f"(no {name.partition('.')[0]} yet)"
        return _PLACEHOLDER.sub(fill, challenge.debrief)

    @property
    def solved(self) -> bool:
        return all(c.held for c in self.checks)

    @property
    def missing(self) -> tuple:
        return tuple(c for c in self.checks if not c.held)


class AttemptError(ValueError):
    """An attempt that cannot be run (a bad line, an operation not allowed): one line."""


def shipped_challenges_dir() -> Path:
    return shipped_lessons_dir() / "challenges"


def challenge_files(directory: Path) -> list[Path]:
    """Challenge files of a folder: ``*.md`` with a ```goal block."""
    return [p for p in markdown_files(directory) if is_challenge_file(p)]


def load_challenges(extra_dirs: Iterable[str | Path] = (), problems: list | None = None) -> list[Challenge]:
    """The shipped challenges and those in ``extra_dirs``, by number; bad files raise
    LessonError, or are collected into ``problems`` when it is a list."""
    sources = [(shipped_challenges_dir(), True)] + [(Path(d), False) for d in extra_dirs]
    found: list[Challenge] = []
    seen: dict = {}
    for directory, shipped in sources:
        if not directory.is_dir():
            continue
        for path in challenge_files(directory):
            try:
                challenge = parse_challenge(read_lesson_text(path), path, shipped)
                if challenge.id in seen:
                    raise LessonError(str(path), 1, f"duplicate challenge id {challenge.id!r} "
                                      f"(already used by {seen[challenge.id]})")
            except LessonError as exc:
                if problems is None:
                    raise
                problems.append(exc)
                continue
            seen[challenge.id] = path
            found.append(challenge)
    return sorted(found, key=lambda c: (c.number, c.id))


def find_challenge(challenges: list[Challenge], wanted: str) -> Challenge:
    """By id or number; KeyError listing the ids otherwise."""
    for challenge in challenges:
        if wanted == challenge.id or (wanted.isdigit() and int(wanted) == challenge.number):
            return challenge
    raise KeyError(f"no challenge {wanted!r} (challenges: {', '.join(c.id for c in challenges)})")


def parse_challenge(text: str, path: str | Path, shipped: bool = True) -> Challenge:
    """Parse one challenge file; LessonError at the first problem, with its line."""
    path, name = Path(path), str(path)
    source = read_markdown(text)
    if not source.starts_with_front_matter:
        raise LessonError(name, 1, "a challenge starts with front matter (--- id:, title:, par: ... ---)")
    try:
        meta, where, body_start = source.front_matter(META)
    except FormatError as exc:
        raise LessonError(name, exc.line, exc.message) from None
    unclosed = source.unclosed()
    if unclosed is not None:
        raise LessonError(name, unclosed.line, f"unclosed {unclosed.marks}{unclosed.kind} block: "
                          f"add a line {unclosed.marks} to end it")
    blocks: dict = {b: [] for b in BLOCKS}
    prose_before: list = []
    prose_after: list = []      # (file line, text): after the solution, the debrief
    for piece in source.pieces(body_start, BLOCKS):
        if isinstance(piece, Prose):
            prose = prose_after if blocks["solution"] else prose_before
            prose.extend(enumerate(piece.lines, piece.line))
        else:
            blocks[piece.kind].append((piece.body, piece.line + 1))

    for needed in ("id", "title", "par"):
        if needed not in meta:
            raise LessonError(name, 1, f"missing {needed}: in the front matter")
    if not _ID.match(meta["id"]):
        raise LessonError(name, where["id"], f"bad id {meta['id']!r}: lower-case letters, digits, - and _")
    par = _whole(meta["par"], "par", name, where)
    number = _whole(meta.get("number", "0"), "number", name, where)
    level = meta.get("level", "medium")
    if level not in LEVELS:
        raise LessonError(name, where.get("level", 1), f"level must be one of {', '.join(LEVELS)}")
    allow = tuple(meta.get("allow", "insert match lock unlock evict").replace(",", " ").split())
    for op in allow:
        if op not in ALLOWED_OPS:
            raise LessonError(name, where["allow"], f"allow: unknown operation {op!r}")
    for block in ("goal", "solution"):
        if len(blocks[block]) != 1:
            raise LessonError(name, 1, f"a challenge needs exactly one ```{block} block")
    goal_text, goal_line = blocks["goal"][0]
    try:
        goal = parse_goal(goal_text, goal_line)
    except GoalError as exc:
        raise LessonError(name, goal_line, f"goal {exc}") from None
    for block in ("start", "solution"):
        for body, line in blocks[block]:
            try:
                parse_script(body, name, first_line=line)
            except ScriptError as exc:
                raise LessonError(name, exc.line, f"{block}: {exc.message}") from None
    for line_number, line in prose_after:
        for found in _PLACEHOLDER.finditer(line):
            try:
                check_subject(found.group(1))
            except GoalError as exc:
                raise LessonError(name, line_number, f"debrief: {exc}") from None
    return Challenge(meta["id"], number, meta["title"], level, par, allow,
                     "\n".join(t for _, t in prose_before).strip(),
                     "\n".join(b for b, _ in blocks["start"]).strip(),
                     goal, tuple(b.strip() for b, _ in blocks["hint"]), blocks["solution"][0][0].strip(),
                     "\n".join(t for _, t in prose_after).strip(), path, shipped)


def _whole(text: str, field: str, name: str, where: dict) -> int:
    try:
        value = int(text)
    except ValueError:
        raise LessonError(name, where.get(field, 1), f"{field} must be a whole number, not {text!r}") from None
    if value < 0:
        raise LessonError(name, where.get(field, 1), f"{field} must not be negative")
    return value


# ------------------------------------------------------------------ playing

def start_session(challenge: Challenge, device: str = "cpu"):
    """A Session with the starting operations played; returns (session, start op count)."""
    from radixviz.script import Session   # loads torch (the engine): only when a challenge is played

    session = Session(device=device)
    if challenge.start:
        session.run(challenge.start, f"{challenge.id}:start")
    return session, len(session.records)


def check_op_allowed(challenge: Challenge, op: Op) -> None:
    """AttemptError when ``op`` is not one this challenge lets the learner use."""
    if op.name not in challenge.allow:
        raise AttemptError(f"{op.where()}: {op.name!r} is not allowed in this challenge "
                           f"(allowed: {', '.join(challenge.allow)})")


def judge(challenge: Challenge, session: Session, start_ops: int) -> Verdict:
    """The verdict on a session where the learner's operations follow the start."""
    learner = session.records[start_ops:]
    return Verdict(tuple(evaluate(challenge.goal, session, learner)), len(learner), challenge.par,
                   run_values(session, learner))


def attempt(challenge: Challenge, script: str, file: str = "<attempt>", device: str = "cpu") -> Verdict:
    """Run ``script`` after the challenge's start and judge it. AttemptError (nothing run)
    for a bad line or a forbidden operation; a refused operation is an AttemptError too."""
    try:
        ops = parse_script(script, file)
    except ScriptError as exc:
        raise AttemptError(str(exc)) from None
    for op in ops:
        check_op_allowed(challenge, op)
    session, start_ops = start_session(challenge, device)
    for op in ops:
        try:
            session.apply(op)
        except ScriptError as exc:
            raise AttemptError(str(exc)) from None
    return judge(challenge, session, start_ops)


def check_challenge(challenge: Challenge) -> list[LessonError]:
    """Problems with a challenge file: its start or solution refused, a solution that misses
    the goal, or one that beats (or misses) its own par."""
    name = str(challenge.path)
    try:
        start_session(challenge)
    except Exception as exc:   # ScriptError from the start block
        return [LessonError(name, 1, f"start: {getattr(exc, 'message', exc)}")]
    try:
        verdict = attempt(challenge, challenge.solution, name)
    except AttemptError as exc:
        return [LessonError(name, 1, f"solution: {exc}")]
    problems = []
    if not verdict.solved:
        missing = "; ".join(f"{c.condition.words} ({c.actual})" for c in verdict.missing)
        problems.append(LessonError(name, verdict.missing[0].condition.line,
                                    f"the solution does not meet the goal: {missing}"))
    if verdict.ops_used < challenge.par:
        problems.append(LessonError(name, 1, f"the solution uses {verdict.ops_used} operations, "
                                    f"fewer than par {challenge.par}: lower par"))
    elif verdict.ops_used > challenge.par:
        problems.append(LessonError(name, 1, f"the solution uses {verdict.ops_used} operations but par "
                                    f"is {challenge.par}: a solution should show par is reachable"))
    return problems


__all__ = ["Challenge", "Verdict", "Check", "Condition", "AttemptError", "load_challenges",
           "find_challenge", "parse_challenge", "attempt", "judge", "start_session",
           "check_op_allowed", "check_challenge", "challenge_files", "shipped_challenges_dir"]
