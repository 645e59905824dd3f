"""``radixviz quiz``: self-test questions and generated ones, graded by the engine."""
from __future__ import annotations

from typing import TYPE_CHECKING

import random
import sys

from radixviz.errors import UsageError
from radixviz.lessons.progress import update_progress
from radixviz.lessons.quiz.questions import LETTERS
from radixviz.lessons.quiz import make_quiz
from radixviz.lessons.lesson.reader import echo_if_piped, result_text
from radixviz.lessons.scenario import run_scenario
from radixviz.script import parse_script   # the parser: no torch
from radixviz.settings import QUIZ_QUESTIONS, SEED

from .lessons import load_or_refuse, pick_lesson

if TYPE_CHECKING:
    from typing import TextIO
    from radixviz.lessons.quiz.quiz import Quiz
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("quiz", help="answer questions about the cache; the engine checks each answer",
                              description="Questions on random scenarios run on the real cache (same "
                              "--seed, same questions), or the chapter's self-test with --selftest.")
    p.add_argument("--plain", action="store_true", help="ask on standard input/output (no full screen)")
    p.add_argument("--lesson", metavar="N", help="questions for lesson N (number or id) only")
    p.add_argument("--seed", type=SEED.arg, help="replay a quiz (printed at the start of each quiz)")
    p.add_argument("--difficulty", choices=("easy", "medium", "hard"), default="medium")
    p.add_argument("--count", type=QUIZ_QUESTIONS.arg, default=QUIZ_QUESTIONS.default, metavar="N",
                   help=f"number of questions (default {QUIZ_QUESTIONS.default}, at most {QUIZ_QUESTIONS.high})")
    p.add_argument("--selftest", action="store_true", help="the chapter's self-test questions and exercises")
    p.add_argument("--no-save", action="store_true", help="do not record the score in your progress")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else _fresh_seed()
    lesson = None if args.lesson is None else pick_lesson(load_or_refuse(), args.lesson).number
    try:
        quiz = make_quiz(seed, args.difficulty, lesson, args.count, args.selftest)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not args.plain and sys.stdin.isatty() and sys.stdout.isatty():
        from radixviz.tui.app import run_quiz_app  # Textual: only for the full screen
        return run_quiz_app(quiz, save=not args.no_save)
    return ask_plain(quiz, sys.stdin, sys.stdout, save=not args.no_save)


def _fresh_seed() -> int:
    return random.SystemRandom().randrange(1, 1_000_000)


def ask_plain(quiz: Quiz, stdin: TextIO, out: TextIO, save: bool = True) -> int:
    """Ask every question on ``stdin``/``out``; end of input stops early with the score so far."""
    if quiz.selftest:
        print(f"radixviz self-test: the chapter's {len(quiz.questions)} self-test questions and exercises",
              file=out)
    else:
        where = f", lesson {quiz.lesson}" if quiz.lesson is not None else ""
        print(f"radixviz quiz: {len(quiz.questions)} questions, {quiz.difficulty}{where}, seed {quiz.seed} "
              f"(replay with --seed {quiz.seed})", file=out)
    print("Type your answer; '?' explains the format, 'show' replays the scenario, 'skip', 'quit'.", file=out)
    for index, question in enumerate(quiz.questions):
        print(f"\n── Question {index + 1}/{len(quiz.questions)} ({question.topic or question.kind}) ──", file=out)
        print(question.prompt, file=out)
        for number, choice in enumerate(question.choices):
            print(f"  {LETTERS[number]}) {choice}", file=out)
        status = _ask_one(quiz, index, stdin, out)
        if status == "eof":
            print("\n(end of input)", file=out)
            break
        if status == "quit":
            break
    return _finish(quiz, out, save)


def _ask_one(quiz: Quiz, index: int, stdin: TextIO, out: TextIO) -> str:
    question = quiz.questions[index]
    while True:
        print(f"answer ({question.hint()}): ", end="", file=out, flush=True)
        line = stdin.readline()
        if not line:
            return "eof"
        echo_if_piped(line, stdin, out)
        reply = line.strip()
        if reply.lower() in ("q", "quit", "exit"):
            return "quit"
        if reply.lower() in ("s", "skip"):
            quiz.skip(index)
            print(f"skipped (counts as not right): the answer was {question.answer_text}", file=out)
            return "skipped"
        if reply == "?" or not reply:
            print(f"type {question.hint()}", file=out)
            continue
        if reply.lower() in ("show", "show me"):
            print(replay_text(question.scenario, include_question=False), file=out)
            continue
        feedback = quiz.answer(index, reply)
        if not feedback.understood:
            print(feedback.explanation, file=out)
            continue
        verdict = "✓ right" if feedback.correct else \
            f"✗ not quite ({feedback.reason}): the answer is {feedback.answer}"
        print(f"{verdict}. {feedback.explanation}", file=out)
        return "answered"


def replay_text(scenario: str, include_question: bool = True) -> str:
    """The scenario replayed on a fresh session, one line per operation with its result."""
    text = scenario if include_question else scenario.split("# the question:")[0]
    session = run_scenario("")
    lines = ["replaying the scenario on a fresh cache:"]
    for op in parse_script(text, "<scenario>"):
        lines.append(f"  {op.text:<28} → {result_text(session.apply(op))}")
    if len(lines) == 1:
        lines.append("  (no operations: the question starts from an empty cache)")
    return "\n".join(lines)


def _finish(quiz: Quiz, out: TextIO, save: bool) -> int:
    print(f"\nScore: {quiz.summary()}", file=out)
    if save and quiz.answers:
        save_score(quiz)
    return 0


def save_score(quiz: Quiz) -> None:
    """Record the quiz's score out of ALL its questions (skipped ones are not right)."""
    _, warnings = update_progress(
        lambda progress: progress.record_score(quiz.score, quiz.total, quiz.difficulty, quiz.lesson, quiz.seed))
    for warning in warnings:
        print(f"radixviz: {warning}", file=sys.stderr)
