"""Read a lesson in plain text: narrative, predictions asked on stdin, operations with results."""
from __future__ import annotations

import sys

from .model import Narrative, Operations, Predict
from .questions import LETTERS


def read_plain(lesson, stdin, out, save: bool = True) -> int:
    """Play ``lesson`` on a real Session; mark it completed when the end is reached."""
    from radixviz.script import ScriptError, Session

    from .scenario import tree_text

    session = Session(device="cpu")
    print(f"Lesson {lesson.number}: {lesson.title}\n", file=out)
    pending: list[Predict] = []
    for block in lesson.blocks:
        if isinstance(block, Narrative):
            print(block.text + "\n", file=out)
        elif isinstance(block, Predict):
            print(f"  ? {block.question}", file=out)
            for i, choice in enumerate(block.choices):
                print(f"      {LETTERS[i]}) {choice}", file=out)
            print("    your prediction: ", end="", file=out, flush=True)
            reply = stdin.readline()
            if not reply:
                print("\n(end of input)", file=out)
                return 0
            echo_if_piped(reply, stdin, out)
            pending.append((block, reply.strip()))
        elif isinstance(block, Operations):
            for op in block.ops:
                try:
                    record = session.apply(op)
                except ScriptError as exc:
                    print(f"  {exc}", file=out)
                    return 1
                print(f"  ▶ {op.text:<30} → {result_text(record)}", file=out)
            print("\n" + "\n".join("    " + l for l in tree_text(session.cache.snapshot()).splitlines()) + "\n", file=out)
            for predict, reply in pending:
                verdict = "✓ you predicted it" if predict.accepts(reply) else f"✗ the answer: {predict.answer}"
                print(f"  {verdict}. {predict.explain}".rstrip() + "\n", file=out)
            pending = []
    saved = False
    if save:
        from .progress import save_lesson_completed
        saved, warnings = save_lesson_completed(lesson)
        for warning in warnings:
            print(f"radixviz: {warning}", file=sys.stderr)
    print(f"End of lesson {lesson.number}" + (": marked as completed." if saved else "."), file=out)
    return 0


def echo_if_piped(reply: str, stdin, out) -> None:
    """Piped input is not shown by a terminal: write it out so a transcript reads in order."""
    isatty = getattr(stdin, "isatty", None)
    if not (isatty and isatty()):
        print(reply.rstrip("\n"), file=out)


def result_text(record) -> str:
    """An operation's result without its empty fields, as the plain-text readers show it."""
    shown = {k: v for k, v in record.result.items() if v not in (None, [], {})}
    return str(shown) if shown else "done"
