"""The scheduler screen's four panes and how one batch is drawn into them.

Importing this module imports the engine (torch, through the tree view), so the screen
loads it in its worker, never on the first paint.
"""
from __future__ import annotations

from types import SimpleNamespace

from textual.containers import Horizontal, Vertical

from radixviz.render.tree import TreeView
from radixviz.script.frames import PoolSnapshot

from .lines_view import LinesView
from .pool_pane import PoolRows
from .scheduler_view import pool_lines, queue_lines, running_lines, wrap

MAX_GHOSTS = 6   # evicted leaves listed under the tree; the summary line counts them all
NO_MARKS = SimpleNamespace(slots=())


def build_panes() -> Horizontal:
    """queue over running batch | tree over pool."""
    panes = {name: LinesView(id=f"sched-{name}", classes="pane") for name in
             ("queue", "running", "tree", "pool")}
    panes["tree"].border_title = "radix tree after the batch"
    panes["pool"].border_title = "KV pool"
    return Horizontal(Vertical(panes["queue"], panes["running"], id="sched-left"),
                      Vertical(panes["tree"], panes["pool"], id="sched-right"),
                      id="sched-panes")


def tree_marks(record, previous):
    """Nodes this batch created (+) and leaves it evicted (†), found by comparing trees."""
    if previous is None:
        return SimpleNamespace(created=tuple(record.tree.nodes), evicted=())
    before, after = previous.tree.nodes, record.tree.nodes
    created = tuple(i for i in after if i not in before)
    gone = [(i, before[i].key) for i in before if i not in after and before[i].key]
    return SimpleNamespace(created=created, evicted=tuple(gone[:MAX_GHOSTS]))


class BatchDrawer:
    """Draws a timeline's current batch; keeps built tree lines so stepping back is free."""

    def __init__(self, screen):
        self.screen = screen
        self.full_pool = False
        self._trees: dict = {}    # batch index -> the tree's lines, for self._timeline
        self._timeline = None

    def pane(self, name: str) -> LinesView:
        return self.screen.query_one(f"#sched-{name}", LinesView)

    def draw(self, timeline) -> None:
        record = timeline.record
        if record is None:
            return
        for name, build in (("queue", queue_lines), ("running", running_lines)):
            pane = self.pane(name)
            width = pane.scrollable_content_region.width or 36
            title, lines = build(record, width)
            pane.border_title = title
            # cropped at the pane's edge: the legend under the list says what each mark means
            pane.set_lines(wrap(lines, width), width=width)
            pane.scroll_home(animate=False)
        tree = self.pane("tree")
        tree.set_lines(self._tree_lines(timeline))
        self.draw_pool(timeline)

    def _tree_lines(self, timeline) -> list:
        if timeline is not self._timeline or len(self._trees) > 512:
            self._timeline, self._trees = timeline, {}   # a new run: its own trees
        if timeline.index not in self._trees:
            record = timeline.record
            view = TreeView(record.tree, tree_marks(record, timeline.previous), legend=True)
            self._trees[timeline.index] = view.lines()
        return self._trees[timeline.index]

    def draw_pool(self, timeline) -> None:
        record = timeline.record
        if record is None:
            return
        pane = self.pane("pool")
        pool = PoolSnapshot(record.refcounts, record.tree)
        width = pane.scrollable_content_region.width or 36
        if self.full_pool:
            rows = PoolRows(SimpleNamespace(pool=pool, marks=NO_MARKS), width)
            pane.set_lines(rows, width=rows.width)
            pane.border_title = "KV pool: every slot (g: compact)"
        else:
            height = pane.scrollable_content_region.height or 4
            pane.set_lines(pool_lines(pool, record.evictable, width, height))
            pane.border_title = "KV pool (g: every slot)"
