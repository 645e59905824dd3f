"""The scheduler screen's four panes as one widget that draws a timeline's current batch.

Importing this module imports the engine (torch, through the tree view), so the screen
loads it in its worker, never on the first paint.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Horizontal, Vertical
from textual.reactive import var

from radixviz.render.pool import PoolRows
from radixviz.render.scheduler import pool_lines, queue_lines, running_lines, wrap
from radixviz.render.tree import TreeView
from radixviz.script.frames import PoolSnapshot

from .lines_view import LinesView

if TYPE_CHECKING:
    from typing import Any
    from radixviz.tui.scheduler_model import BatchTimeline


class SchedulerPanes(Horizontal):
    """queue over running batch | tree over pool. Keeps built tree lines, so stepping back
    is free."""

    full_pool = var(False, init=False)
    """The pool pane shows every slot (else a map squeezed into a few lines)."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._trees: dict = {}    # batch index -> the tree's lines, for self._timeline
        self._timeline: BatchTimeline | None = None
        self._shown: BatchTimeline | None = None        # the timeline drawn last, to draw again

    def compose(self):
        panes = {name: LinesView(id=f"sched-{name}", classes="pane") for name in
                 ("queue", "running", "tree", "pool")}
        panes["tree"].border_title = "radix tree after the batch"
        panes["pool"].border_title = "KV pool"
        yield Vertical(panes["queue"], panes["running"], id="sched-left")
        yield Vertical(panes["tree"], panes["pool"], id="sched-right")

    def pane(self, name: str) -> LinesView:
        return self.query_one(f"#sched-{name}", LinesView)

    def watch_full_pool(self, full: bool) -> None:
        self.pane("pool").set_class(full, "full")
        # redraw once the pane has its new height: the compact map fills what it has
        self.call_after_refresh(self.show, self._shown)

    def show(self, timeline: BatchTimeline) -> None:
        if timeline is None or timeline.record is None:
            return
        self._shown, record = timeline, timeline.record
        for name, build in (("queue", queue_lines), ("running", running_lines)):
            pane = self.pane(name)
            width = pane.scrollable_content_region.width or 36
            title, lines = build(record, width)
            pane.border_title = title
            # cropped at the pane's edge: the legend under the list says what each mark means
            pane.set_lines(wrap(lines, width), width=width)
            pane.scroll_home(animate=False)
        self.pane("tree").set_lines(self._tree_lines(timeline))
        self._show_pool(timeline)

    def _tree_lines(self, timeline: BatchTimeline) -> list:
        if timeline is not self._timeline or len(self._trees) > 512:
            self._timeline, self._trees = timeline, {}   # a new run: its own trees
        if timeline.index not in self._trees:
            view = TreeView(timeline.record.tree, timeline.tree_marks(), legend=True)
            self._trees[timeline.index] = view.lines()
        return self._trees[timeline.index]

    def _show_pool(self, timeline: BatchTimeline) -> None:
        record = timeline.record
        pane = self.pane("pool")
        pool = PoolSnapshot(record.refcounts, record.tree)
        width = pane.scrollable_content_region.width or 36
        if self.full_pool:
            rows = PoolRows(pool, width=width)
            pane.set_lines(rows, width=rows.width)
            pane.border_title = "KV pool: every slot (g: compact)"
        else:
            height = pane.scrollable_content_region.height or 4
            pane.set_lines(pool_lines(pool, record.evictable, width, height))
            pane.border_title = "KV pool (g: every slot)"
