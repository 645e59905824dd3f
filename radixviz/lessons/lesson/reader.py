"""Read a lesson in plain text: narrative, predictions asked on stdin, operations with results."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from radixviz.script import ScriptError

from ..grading import LETTERS
from .checker import hold_to_engine
from .model import Narrative, Operations, Predict
from ..progress import save_lesson_completed
from ..scenario import tree_text

if TYPE_CHECKING:
    from typing import TextIO
    from ...script.frames import OpRecord
    from ..grading import Verdict
    from .model import Lesson


def read_plain(lesson: Lesson, stdin: TextIO, out: TextIO, save: bool = True) -> int:
    """Play ``lesson`` on a real Session; mark it completed when the end is reached."""
    from radixviz.script import Session   # loads torch (the engine): only when a lesson is read

    session = Session(device="cpu")
    print(f"Lesson {lesson.number}: {lesson.title}\n", file=out)
    pending: list = []
    right = asked = 0
    for block in lesson.blocks:
        if isinstance(block, Narrative):
            if block.text:     # a block of app-only passages has nothing to say here
                print(block.text + "\n", file=out)
        elif isinstance(block, Predict):
            print(f"  ? {block.question}", file=out)
            for i, choice in enumerate(block.choices):
                print(f"      {LETTERS[i]}) {choice}", file=out)
            verdict = _ask(block, stdin, out)
            if verdict is None:
                print("\n(end of input)", file=out)
                return 0
            pending.append((block, verdict))
            asked += 1
            right += verdict.correct
        elif isinstance(block, Operations):
            records = []
            for op in block.ops:
                try:
                    records.append(session.apply(op))
                except ScriptError as exc:
                    print(f"  {exc}", file=out)
                    return 1
                print(f"  ▶ {op.text:<30} → {result_text(records[-1])}", file=out)
            drawn = tree_text(session.cache.snapshot()).splitlines()
            print("\n" + "\n".join("    " + l for l in drawn) + "\n", file=out)
            for predict, verdict in pending:
                warning = hold_to_engine(predict, records, session).warning(predict)
                print(f"  {answer_text(predict, verdict)}" + (f"\n  {warning}" if warning else "") + "\n",
                      file=out)
            pending = []
    saved = False
    if save:
        saved, warnings = save_lesson_completed(lesson, right, asked)
        for warning in warnings:
            print(f"radixviz: {warning}", file=sys.stderr)
    score = f" You predicted {right} of {asked}." if asked else ""
    print(f"End of lesson {lesson.number}" + (": marked as completed." if saved else ".") + score, file=out)
    return 0


def answer_text(predict: Predict, verdict: Verdict | None) -> str:
    """What a prediction's learner reads once its operations have run: right, or wrong and
    why, the answer and the explanation. ``verdict`` None: the prediction was skipped."""
    if verdict is None:
        said = f"– skipped: the answer is {predict.answer}"
    elif verdict.correct:
        said = "✓ you predicted it"
    else:
        said = f"✗ {verdict.reason}: the answer is {predict.answer}"
    return f"{said}. {predict.explain}".rstrip()


def _ask(predict: Predict, stdin: TextIO, out: TextIO):
    """Read replies until one can be graded: the Verdict, or None at the end of input."""
    while True:
        form = "" if predict.choices else f" ({predict.reply_form})"
        print(f"    your prediction{form}: ", end="", file=out, flush=True)
        reply = stdin.readline()
        if not reply:
            return None
        echo_if_piped(reply, stdin, out)
        verdict = predict.grade(reply)
        if verdict.understood:
            return verdict
        print(f"    {verdict.reason}", file=out)


def echo_if_piped(reply: str, stdin: TextIO, out: TextIO) -> None:
    """Piped input is not shown by a terminal: write it out so a transcript reads in order."""
    isatty = getattr(stdin, "isatty", None)
    if not (isatty and isatty()):
        print(reply.rstrip("\n"), file=out)


def result_text(record: OpRecord) -> str:
    """An operation's result without its empty fields, as the plain-text readers show it."""
    shown = {k: v for k, v in record.result.items() if v not in (None, [], {})}
    return str(shown) if shown else "done"
