"""A lesson as a walk the learner takes through its blocks, free of widgets.

The blocks become a fixed plan of stops, in the file's order:

``read``    a paragraph block goes on the page;
``ask``     a prediction is put to the learner (before the operations that answer it);
``ops``     an operations block runs, and the learner steps through its frames;
``answer``  once those operations have run, every prediction asked since the operations
            before them is answered: right, or wrong and why, with its explanation;
``end``     the end of the lesson, where its completion is recorded.

A *page* is what the lesson pane shows: the paragraphs since the last operations, each
question with the learner's reply and, from its ``answer`` stop on, the verdict. A page
starts at a paragraph that follows operations. What a stop shows is built from the plan
and the replies given, never from what was on screen before, so going back to a stop shows
the same text again.

The walk never changes the lesson's operations: the app takes typing and undo into a
sandbox copy, so every prediction is answered on the lesson's own tree, which
``lessons --check`` holds to the engine; the ``answer`` stop asks the same judge
(``checker.hold_to_engine``), so what it says here is what ``--check`` and ``--read`` say.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from radixviz.lessons import Narrative
from radixviz.lessons.lesson.checker import hold_to_engine
from radixviz.lessons.lesson.reader import answer_text

if TYPE_CHECKING:
    from radixviz.lessons import Lesson, Predict
    from radixviz.lessons.grading import Chosen, Verdict
    from radixviz.script.frames import OpRecord

    from .stepper_model import StepperModel


@dataclass(frozen=True)
class Stop:
    kind: str                  # read ask ops answer end
    page: int
    block: int                 # the lesson block it plays (answer: its operations; end: past the last)
    asks: tuple = ()           # answer: the blocks of the predictions it answers


@dataclass(frozen=True)
class Part:
    """A piece of a page: ``prose`` (Markdown), ``reply`` (a question, the reply and, once
    answered, the verdict), or ``end``."""
    kind: str
    text: str
    verdict: str = ""          # reply: "", "right", "wrong", "skipped" or "earlier"


@dataclass(frozen=True)
class Reply:
    said: str                  # the reply as shown back: "b) 3", "16 tokens"
    verdict: Verdict | None = None   # None when skipped (or answered earlier)
    earlier: bool = False      # answered before the learner left and came back


def plan_of(lesson: Lesson) -> tuple[Stop, ...]:
    """The stops of ``lesson`` in walking order (see the module's docstring)."""
    stops: list[Stop] = []
    pending: list[int] = []
    pages = lesson.pages   # one rule for the app's pages and the places saved in words
    for index, (block, page) in enumerate(zip(lesson.blocks, pages)):
        kind = type(block).__name__
        if kind == "Narrative":
            stops.append(Stop("read", page, index))
        elif kind == "Predict":
            pending.append(index)
            stops.append(Stop("ask", page, index))
        elif kind == "Operations":
            stops.append(Stop("ops", page, index))
            if pending:
                stops.append(Stop("answer", page, index, tuple(pending)))
                pending = []
    stops.append(Stop("end", pages[-1] if pages else 0, len(lesson.blocks)))
    return tuple(stops)


class LessonWalk:
    def __init__(self, lesson: Lesson):
        self.lesson = lesson
        self.plan = plan_of(lesson)
        self.at = -1               # the stop shown
        self.reached = -1          # the furthest stop reached: beyond it nothing has run
        self.replies: dict[int, Reply] = {}          # prediction block -> the learner's reply
        self.ran: dict[int, tuple[int, int]] = {}    # ops stop -> (first frame, last frame)
        self.records: dict[int, list[OpRecord]] = {}         # ops stop -> the records of its operations
        self.engine_warnings: dict[int, str] = {}        # prediction block -> the warning, where the
        #                                              engine's value is not the file's answer
        self.error: str | None = None                # a refused operation (a teacher's lesson)
        self.right = self.asked = 0
        self.completed = False

    # ------------------------------------------------------------------ where

    @property
    def stop(self) -> Stop | None:
        return self.plan[self.at] if self.at >= 0 else None

    @property
    def here(self) -> Stop:
        """The stop shown, once the walk has started (``stop`` before that is None)."""
        if self.at < 0:
            raise RuntimeError("the lesson walk has not started: no stop is shown")
        return self.plan[self.at]

    @property
    def at_end(self) -> bool:
        return self.at >= len(self.plan) - 1

    @property
    def waiting(self) -> Predict | None:
        """The Predict the stop shown asks and the learner has not answered, or None."""
        stop = self.stop
        if stop is None or stop.kind != "ask" or stop.block in self.replies:
            return None
        return self.lesson.blocks[stop.block]

    @property
    def progress(self) -> tuple[str, str]:
        """Where the learner is, long and short (the status line picks what fits)."""
        page, pages = (self.stop.page + 1 if self.stop else 1), self.plan[-1].page + 1
        return f"lesson {self.lesson.number} · page {page} of {pages}", f"page {page}/{pages}"

    @property
    def resume_block(self) -> int:
        """The block to come back to: that of the furthest stop reached."""
        return self.plan[self.reached].block if self.reached >= 0 else 0

    def pointers(self, at: int | None = None) -> tuple:
        """What the paragraphs shown at stop ``at`` point at on screen (``Pointer``s): those
        read since the operations before them, while the picture is the one they were
        written beside; none while operations step or are answered."""
        at = self.at if at is None else at
        if at < 0 or self.plan[at].kind not in ("read", "ask"):
            return ()
        found: tuple = ()
        for stop in self.plan[:at + 1]:
            if stop.kind in ("ops", "answer"):
                found = ()
            elif stop.kind == "read":
                found += self.lesson.blocks[stop.block].pointers
        return found

    def frames(self, at: int | None = None) -> tuple[int, int] | None:
        """(first, last) frame of an ops stop that ran; None for other stops."""
        return self.ran.get(self.at if at is None else at)

    def shown_frame(self, at: int | None = None) -> int | None:
        """The frame a stop that runs nothing shows: the last of the operations before it,
        or None before the first operations (the cache is empty)."""
        for index in range(self.at if at is None else at, -1, -1):
            if index in self.ran:
                return self.ran[index][1]
        return None

    # ------------------------------------------------------------------ moving

    def forward(self, model: StepperModel | None) -> tuple[Stop | None, bool]:
        """Go to the next stop, playing it when it is reached for the first time: returns
        (the stop, whether it was played now); (None, False) past the end. A prediction
        waiting for its reply holds the walk where it is, and so does an operations stop
        not played yet while the engine loads (``model`` None)."""
        if self.at_end or self.waiting is not None:
            return None, False
        if model is None and self.plan[self.at + 1].kind in ("ops", "answer") and self.at + 1 > self.reached:
            return None, False
        self.at += 1
        first_time = self.at > self.reached
        if first_time:
            self.reached = self.at
            self._play(model)
        return self.stop, first_time

    def back(self) -> bool:
        """Go to the stop before; False at the first."""
        if self.at <= 0:
            return False
        self.at -= 1
        return True

    def fast_forward(self, model: StepperModel, block: int, right: int = 0, asked: int = 0) -> None:
        """Replay the stops before ``block`` without asking anything (resuming a lesson left
        there; its predictions were answered then): ``forward`` next plays that block."""
        while not self.at_end and self.plan[self.at + 1].block < block:
            self.at += 1
            self.reached = self.at
            if self.here.kind == "ask":
                self.replies[self.here.block] = Reply("", earlier=True)
            else:
                self._play(model)
        self.right, self.asked = right, asked

    def _play(self, model: StepperModel | None) -> None:
        stop = self.here
        if model is None:
            return   # a stop that runs nothing (forward holds the others until the engine is there)
        if stop.kind == "ops":
            applied = model.apply_ops(self.lesson.blocks[stop.block].ops)
            self.error = applied.error
            if applied.records:
                self.ran[self.at] = (applied.records[0].first_frame, applied.records[-1].last_frame)
                self.records[self.at] = list(applied.records)
        elif stop.kind == "answer":
            # the operations have just run: the engine's own value for each prediction
            records = self.records.get(self.at - 1, [])
            for block in stop.asks:
                warning = hold_to_engine(self.lesson.blocks[block], records, model.session) \
                    .warning(self.lesson.blocks[block])
                if warning is not None:
                    self.engine_warnings[block] = warning

    # ------------------------------------------------------------------ replies

    def answer(self, reply: str | Chosen, said: str) -> Verdict:
        """Grade ``reply`` (typed text or a ``grading.Chosen``) to the waiting prediction and
        keep it when it could be read; returns the Verdict."""
        predict = self.waiting
        if predict is None:
            raise RuntimeError("no prediction is waiting for a reply here")
        verdict = predict.grade(reply)
        if verdict.understood:
            self.replies[self.here.block] = Reply(said, verdict)
            self.asked += 1
            self.right += verdict.correct
        return verdict

    def skip(self) -> None:
        """The learner passes on the waiting prediction (counted as asked, not right)."""
        if self.waiting is not None:
            self.replies[self.here.block] = Reply("")
            self.asked += 1

    # ------------------------------------------------------------------ the page

    def page(self, at: int | None = None) -> tuple[list[Part], int | None]:
        """(the parts of the page at stop ``at``, the index of the first part that stop
        itself put there or changed; None when it put none, as an operations stop)."""
        at = self.at if at is None else at
        if at < 0:
            return [], None
        here = self.plan[at]
        answered = {block for stop in self.plan[:at + 1] if stop.kind == "answer" for block in stop.asks}
        parts: list[Part] = []
        starts: dict[int, int] = {}      # lesson block -> the index of its part
        for stop in self.plan[:at + 1]:
            if stop.page != here.page:
                continue
            if stop.kind == "read":
                starts[stop.block] = len(parts)
                parts.append(Part("prose", self.lesson.blocks[stop.block].in_app))
            elif stop.kind == "ask" and stop.block in self.replies:
                starts[stop.block] = len(parts)
                parts.append(self._reply_part(stop.block, stop.block in answered))
            elif stop.kind == "end":
                starts[stop.block] = len(parts)
                parts.append(Part("end", self.end_text()))
        blocks = here.asks if here.kind == "answer" else () if here.kind == "ops" else (here.block,)
        own = min((starts[b] for b in blocks if b in starts), default=None)
        return parts, own

    def _reply_part(self, block: int, answered: bool) -> Part:
        predict, reply = self.lesson.blocks[block], self.replies[block]
        lines = [f"? {predict.question}"]
        if reply.earlier:
            lines.append("(answered before you left the lesson)")
        else:
            lines.append(f"your prediction: {reply.said}" if reply.said else "skipped")
        verdict = ""
        if answered:
            if reply.earlier:
                lines.append(f"Answer: {predict.answer}. {predict.explain}".rstrip())
                verdict = "earlier"
            else:
                lines.append(answer_text(predict, reply.verdict))
                verdict = "skipped" if reply.verdict is None else \
                    "right" if reply.verdict.correct else "wrong"
            if block in self.engine_warnings:
                lines.append(self.engine_warnings[block])
        return Part("reply", "\n".join(lines), verdict)

    def end_text(self) -> str:
        """The closing words of the lesson: the score, the quiz, where to go next."""
        lesson = self.lesson
        score = f" You predicted {self.right} of {self.asked}." if self.asked else ""
        last = next((b.in_app for b in reversed(lesson.blocks) if isinstance(b, Narrative)), "")
        quiz = "" if f"quiz --lesson {lesson.number}" in last else \
            f" Test yourself: radixviz quiz --lesson {lesson.number}."
        return (f"End of lesson {lesson.number}.{score}{quiz}\n"
                "h: home · ← back through the lesson · : your own operations in a sandbox copy")
