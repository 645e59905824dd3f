"""A lesson's layout: the tree and pool on the left, the lesson's words on the right with
the docked prediction, this step's what-and-why and the code under them.

Two layouts, set by the screen as classes:

- ``watch``: the picture beside the words. While a prediction is asked it sits under the
  lesson text, beside the tree and pool it is about; while operations step, this step's
  what-and-why (and, with room, the code) sit under the text.
- ``-reading``: the lesson text alone, across the whole screen, for reading a long page
  on a small terminal (the screen picks it there for paragraphs and answers; r toggles).

Importing this module does not import the engine (torch): the lesson's first page is drawn
while the engine loads (``show_loading``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import Horizontal, Vertical

from .code_pane import CodePane
from .lesson_page import LessonPage
from .narration import NarrationPane, StatusLine
from .pool_pane import PoolPane
from .prediction import PredictionDock
from .tree_pane import TreePane

if TYPE_CHECKING:
    from collections.abc import Sequence
    from textual.widget import Widget
    from radixviz.lessons.lesson.model import Pointer
    from radixviz.script.frames import Frame
    from radixviz.tui.stepper_model import StepperModel


class LessonPanes(Vertical):
    def compose(self):
        with Horizontal(id="panes"):
            with Vertical(id="left-column"):
                yield self._titled(TreePane(id="tree-pane", classes="pane"), "tree")
                yield self._titled(PoolPane(id="pool-pane", classes="pane"), "KV pool")
            with Vertical(id="right-column"):
                yield self._titled(LessonPage(id="lesson-pane", classes="pane"), "lesson")
                yield PredictionDock(id="predict-dock", classes="pane")
                yield self._titled(NarrationPane(id="step-pane", classes="pane"), "this step")
                yield self._titled(CodePane(id="code-pane", classes="pane"), "code that ran")
        yield StatusLine(id="status-line")

    @staticmethod
    def _titled(widget: Widget, title: str):
        widget.border_title = title
        return widget

    def choose_layout(self, *, reading: bool, asking: bool, stepping: bool, small: bool) -> None:
        """Pick the layout: the page alone (``reading``), the prediction docked (``asking``),
        or this step under the page (``stepping``; the code too unless ``small``)."""
        self.set_class(small, "-small")
        self.set_class(reading and not asking, "-reading")
        self.set_class(asking, "-asking")
        self.set_class(stepping and not asking, "-stepping")

    def show_loading(self, parts: list, own: int | None, title: str, pool_size: int, status: str) -> None:
        """The page ``parts`` opened at part ``own``, beside the empty tree and a free pool of
        ``pool_size`` slots, ``status`` on the status line: all of it while the engine loads
        (nothing here needs torch)."""
        page = self.query_one(LessonPage)
        page.border_title = title
        page.show(parts, own)
        self.query_one(TreePane).show_lines([Text("root  (no tokens yet)", style="bold")])
        self.query_one(PoolPane).show_free(pool_size)
        self.query_one(StatusLine).update(Text(status, no_wrap=True, overflow="ellipsis"), layout=False)

    def show(self, model: StepperModel, frame: Frame | None, parts: list, own: int | None,
             notes: Sequence[tuple[str, str]], title: str, before: Frame | None = None,
             pointers: Sequence[Pointer] = ()) -> None:
        """Draw ``frame`` of ``model`` (None: ``before``, the cache as it was before the
        lesson's first operations) and the page ``parts``, opened at part ``own``; ``notes``
        end the status line; what ``pointers`` name is brought into view in its pane."""
        page = self.query_one(LessonPage)
        page.border_title = title
        page.show(parts, own)
        status = self.query_one(StatusLine)
        shown = frame if frame is not None else before or model.session.live_frame()
        self.query_one(TreePane).show(shown, [p for p in pointers if p.pane == "tree"])
        self.query_one(PoolPane).show(shown, [p for p in pointers if p.pane == "pool"])
        if frame is None:
            status.show_empty(shown.tree, notes)
            return
        if self.has_class("-stepping"):
            self.query_one(CodePane).show(frame.source, frame.label)
            self.query_one(NarrationPane).show(frame, model.record)
        status.show(frame, len(model.frames), len(model.session.records), notes)
