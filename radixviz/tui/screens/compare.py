"""The compare view: the same operations run with both matchers, side by side (#7).

Each column shows one matcher's tree, what the operation returned and the pool, after the
same operation; → and ← step both together, d jumps to the first operation whose outcome
differs, which is marked on the status line. The sessions run in a worker (torch).
"""
from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from radixviz.render.pool import PoolGrid
from radixviz.render.summary import op_result
from radixviz.render.tree import TreeView

SIDES = (("fixed", "fixed matcher (#7)"), ("buggy", "BUGGY matcher (pre-#7)"))


class CompareScreen(Screen):
    BINDINGS = [
        Binding("right,n,space", "step(1)", "Next op"),
        Binding("left,p", "step(-1)", "Prev op"),
        Binding("d", "divergence", "First difference"),
        Binding("home", "go(0)", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("escape,h,c", "close", "Back"),
        Binding("q", "quit_app", "Quit"),
    ]

    def __init__(self, ops, pool_size: int, device="auto", at: int | None = None):
        """``at``: the operation to show first (0-based; the last by default)."""
        super().__init__()
        self.ops, self.pool_size, self.device, self.start = list(ops), pool_size, device, at
        self.side = None
        self.index = 0

    def compose(self) -> ComposeResult:
        yield Static("comparing the matchers: running the operations twice…", id="compare-status")
        with Horizontal(id="compare-body"):
            for name, title in SIDES:
                with Vertical(classes="compare-side", id=f"side-{name}") as column:
                    column.border_title = title
                    yield VerticalScroll(Static("", id=f"tree-{name}"), classes="compare-tree")
                    yield Static("", id=f"result-{name}", classes="compare-result")
                    yield Static("", id=f"pool-{name}", classes="compare-pool")
        yield Footer()

    def on_mount(self) -> None:
        self._run()

    @work(thread=True, exclusive=True, group="compare")
    def _run(self) -> None:
        from radixviz.script import compare_ops   # the engine (torch), off the UI thread
        side = compare_ops(self.ops, self.pool_size, self.device)
        self.app.call_from_thread(self._ready, side)

    def _ready(self, side) -> None:
        if not self.is_attached:
            return
        self.side = side
        last = side.count - 1
        self.index = last if self.start is None else max(0, min(self.start, last))
        self.show()

    # ----------------------------------------------------------------- drawing

    def show(self) -> None:
        side = self.side
        status = self.query_one("#compare-status", Static)
        if side is None or side.count == 0:
            status.update("nothing to compare: no operation ran"
                          + (f" ({side.error.message})" if side and side.error else ""))
            return
        k = self.index
        differs = side.differs(k)
        line = Text(f"op {k + 1}/{side.count}: {side.ops[k].text}", style="bold")
        if k == side.diverged:
            line.append("   ◀ first divergence: the matchers part ways here", style="bold red")
        elif differs:
            line.append("   ≠ still different", style="red")
        elif side.diverged is None:
            line.append("   both matchers agree on every operation", style="dim")
        else:
            line.append(f"   same so far; they part ways at op {side.diverged + 1} (d)", style="dim")
        status.update(line)
        for (name, _), session in zip(SIDES, (side.fixed, side.buggy)):
            record = session.records[k]
            frame = session.frames[record.last_frame]
            self.query_one(f"#tree-{name}", Static).update(TreeView(frame.tree, frame.marks, legend=True))
            result = Text(f"returned: {op_result(record)}", style="bold red" if differs else "")
            self.query_one(f"#result-{name}", Static).update(result)
            self.query_one(f"#pool-{name}", Static).update(Group(PoolGrid(frame.pool, frame.marks)))

    # ----------------------------------------------------------------- keys

    def action_step(self, delta: int) -> None:
        self.action_go(self.index + delta)

    def action_go(self, index: int) -> None:
        if self.side is None or not self.side.count:
            return
        self.index = max(0, min(index, self.side.count - 1))
        self.show()

    def action_last(self) -> None:
        if self.side is not None:
            self.action_go(self.side.count - 1)

    def action_divergence(self) -> None:
        if self.side is None:
            return
        if self.side.diverged is None:
            self.notify("the two matchers agree on every operation here", timeout=3)
            return
        self.action_go(self.side.diverged)

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_quit_app(self) -> None:
        self.app.exit()

