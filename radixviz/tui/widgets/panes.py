"""The stepper's panes as one widget that draws a frame into them.

Importing this module imports the engine (torch), so the stepper loads it in a worker.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import Horizontal, Vertical

from .code_pane import CodePane
from .narration import NarrationPane, StatusLine
from .pool_pane import PoolPane
from .tree_pane import TreePane

if TYPE_CHECKING:
    from collections.abc import Sequence
    from radixviz.script.frames import Frame, OpRecord
    from radixviz.tui.stepper_model import StepperModel

EMPTY_HINT = ("The cache is empty. Press : (or i) and type an operation, for example\n"
              '  insert "Hello_L.A.!"\nthen step through it with → and ←. Press ? for help.')


TITLES = ("tree", "code that ran", "KV pool", "this step")


class StepperPanes(Vertical):
    """The sandbox's layout: tree | code over pool | narration, then the status line.

    Built as two columns, so that while there is no code to show (an empty cache's hint)
    the narration can take the code pane's place.
    """

    def compose(self):
        panes = (TreePane(id="tree-pane", classes="pane"), CodePane(id="code-pane", classes="pane"),
                 PoolPane(id="pool-pane", classes="pane"),
                 NarrationPane(id="narration-pane", classes="pane"))
        for pane, title in zip(panes, TITLES):
            pane.border_title = title
        tree, code, pool, narration = panes
        with Horizontal(id="panes"):
            yield Vertical(tree, pool, id="left-column")
            yield Vertical(code, narration, id="right-column")
        yield StatusLine(id="status-line")

    def show_loading(self, pool_size: int, status: str) -> None:
        """Before the engine has loaded: the tree's root, a free pool of ``pool_size`` slots,
        the hint of what to type, and ``status`` on the status line. Nothing here needs torch."""
        self.query_one(TreePane).show_lines([Text("root  (no tokens yet)", style="bold")])
        self.query_one(PoolPane).show_free(pool_size)
        code = self.query_one(CodePane)
        code.display = True
        code.update(Text("the engine's code for each step shows here", style="dim"))
        self.query_one(NarrationPane).show_parts([Text(EMPTY_HINT, style="dim")])
        self.query_one(StatusLine).update(Text(status, no_wrap=True, overflow="ellipsis"), layout=False)

    def show(self, model: StepperModel, notes: Sequence[tuple[str, str]] = ()) -> None:
        """Draw ``model``'s current frame (or the empty-cache hint); ``notes`` are
        (long, short) texts for the status line's end."""
        frame = model.frame
        narration = self.query_one(NarrationPane)
        status = self.query_one(StatusLine)
        code = self.query_one(CodePane)
        code.display = frame is not None
        if frame is None:
            narration.show_parts([Text(EMPTY_HINT, style="dim")])
            empty = model.session.live_frame()  # the root alone and a free pool, not blank panes
            status.show_empty(empty.tree, notes)
            self.query_one(TreePane).show(empty)
            self.query_one(PoolPane).show(empty)
            return
        self.query_one(TreePane).show(frame)
        self.query_one(PoolPane).show(frame)
        code.show(frame.source, frame.label)
        narration.show(frame, model.record)
        status.show(frame, len(model.frames), len(model.session.records), notes)

    def prefetch(self, frame: Frame, record: OpRecord | None) -> None:
        """Build ahead, in idle time, what showing ``frame`` (the next step, of operation
        ``record``) will need: the rows each pane will show and their strips. Nothing is
        painted; a step that comes finds them built."""
        self.query_one(TreePane).prefetch(frame)
        self.query_one(PoolPane).prefetch(frame)
        self.query_one(CodePane).prefetch(frame.source, frame.label)
        self.query_one(NarrationPane).prefetch(frame, record)
