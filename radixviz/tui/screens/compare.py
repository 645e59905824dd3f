"""The compare view: the same operations in two columns, side by side.

The columns are the two matchers of the 2024 engine (#7) or, across time, the 2024 engine
and SGLang's cache of 2026. Each shows its tree, what the operation returned and the pool,
after the same operation; → and ← step both together, d jumps to the first operation whose
outcome differs, which is marked on the status line; . and , step both by micro-step inside
an operation (each column its own k-th step; the one with fewer steps waits on its last).
The sessions run in a worker (torch).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from radixviz.render.pool import PoolGrid
from radixviz.render.summary import op_result
from radixviz.render.tree import TreeView
from radixviz.script import describe
from radixviz.cache.engines import default_engine, engine_spec, engine_with
from radixviz.script.sides import engine_sides, later_sides
from radixviz.tui.widgets.footer import FittingFooter

SIDES = (("fixed", "fixed matcher (#7)"), ("buggy", "BUGGY matcher (pre-#7)"))


def engine_columns(session: Session) -> tuple[SideConfig, SideConfig]:
    """The compare across time for a session: its 2024 matcher beside the 2026 engine with
    its page size and policy (page 1, LRU when it started on the 2024 engine); a session of a
    later engine (the unified tree): the 2026 engine beside it, with its own options."""
    start = session.initial
    engine = start["engine"]
    if engine not in (default_engine(), engine_with("pages", without="host_tier")):
        spec = engine_spec(engine)
        more = tuple((o.name, start[o.name]) for o in spec.options
                     if o.name not in ("page_size", "eviction_policy") and o.name in start)
        return later_sides(engine, start["page_size"], start["eviction_policy"], more)
    return engine_sides(buggy=session.initial_buggy, page_size=start["page_size"],
                        eviction_policy=start["eviction_policy"])


if TYPE_CHECKING:
    from textual import getters

    from radixviz.script.compare import SideBySide
    from radixviz.script.frames import OpRecord
    from radixviz.script.parser import Op
    from radixviz.script.session import Session
    from radixviz.script.sides import SideConfig
    from radixviz.tui.app_base import RadixvizAppBase


class CompareScreen(Screen):
    if TYPE_CHECKING:   # for mypy: this screen runs in the radixviz app (Textual says App[Any])
        app = getters.app(RadixvizAppBase)
    BINDINGS = [
        Binding("right,n,space", "step(1)", "Next op"),
        Binding("left,p", "step(-1)", "Prev op"),
        Binding("d", "divergence", "First difference"),
        # back and quit before the micro-steps: a narrow footer keeps the keys listed first
        Binding("escape,h,c,C", "close", "Back"),
        Binding("q", "quit_app", "Quit"),
        Binding("full_stop", "micro(1)", "Step", key_display=".",
                tooltip="next micro-step in both columns"),
        Binding("comma", "micro(-1)", "Step back", key_display=",",
                tooltip="previous micro-step in both columns"),
        Binding("home", "go(0)", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]

    def __init__(self, ops: Iterable[Op], pool_size: int, device: str = "auto", at: int | None = None,
                 columns: tuple[SideConfig, SideConfig] | None = None):
        """``at``: the operation to show first (0-based; the last by default); ``columns``:
        two SideConfig (the #7 matchers by default; ``engine_columns`` compares across time)."""
        super().__init__()
        self.ops, self.pool_size, self.device, self.start = list(ops), pool_size, device, at
        self.columns = columns
        across = columns is not None and columns[0].engine != columns[1].engine
        self.noun = "engines" if across else "matchers"
        self.sides = SIDES if columns is None or not across else tuple((c.engine, c.title) for c in columns)
        self.side: SideBySide | None = None   # once the worker has run the sessions
        self.index = 0
        self.micro: int | None = None   # the micro-step shown in the operation; None: its last

    def compose(self) -> ComposeResult:
        yield Static(f"comparing the {self.noun}: running the operations twice…", id="compare-status")
        if self.noun == "engines":
            # one line at 80 columns: ref (2024) and lock_ref (2026) are both "locks"
            yield Static("compared: results, edges, slots, locks · not compared: times, hits, priorities",
                         id="compare-note", classes="hint")
        with Horizontal(id="compare-body"):
            for name, title in self.sides:
                with Vertical(classes="compare-side", id=f"side-{name}") as column:
                    column.border_title = title
                    yield VerticalScroll(Static("", id=f"tree-{name}"), classes="compare-tree")
                    yield Static("", id=f"result-{name}", classes="compare-result")
                    yield Static("", id=f"pool-{name}", classes="compare-pool")
        yield FittingFooter()

    def on_mount(self) -> None:
        self._run()

    @work(thread=True, exclusive=True, group="compare")
    def _run(self) -> None:
        from radixviz.script import compare_ops, compare_sides   # the engine (torch), off the UI thread
        if self.columns is None:
            side = compare_ops(self.ops, self.pool_size, self.device)
        else:
            side = compare_sides(self.ops, *self.columns, self.pool_size, self.device)
        self.app.call_from_thread(self._ready, side)

    def _ready(self, side: SideBySide) -> None:
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
            line.append(f"   ◀ first divergence: the {self.noun} part ways here", style="bold red")
        elif differs:
            line.append("   ≠ still different", style="red")
        elif side.diverged is None:
            line.append(f"   both {self.noun} agree on every operation", style="dim")
        else:
            line.append(f"   same so far; they part ways at op {side.diverged + 1} (d)", style="dim")
        if self.micro is not None:
            line.append(f"   step {self.micro + 1}/{self._steps(k)} (. ,)", style="bold")
        status.update(line)
        titles = side.titles(k) if side.across_engines else [title for _, title in self.sides]
        for (name, _), title, session in zip(self.sides, titles, side.sessions):
            self.query_one(f"#side-{name}").border_title = title   # a script line may change it
            record = session.records[k]
            # a long history drops its oldest steps (frame_history.py): show the oldest kept
            frame = session.frames[max(self._frame_index(record), session.frames.first)]
            self.query_one(f"#tree-{name}", Static).update(TreeView(frame.tree, frame.marks, legend=True))
            result = Text(f"returned: {op_result(record)}", style="bold red" if differs else "")
            if self.micro is not None:
                count = len(record.frame_range)
                shown = min(self.micro, count - 1) + 1
                result = Text.assemble((f"step {shown}/{count}: {describe(frame)}", "bold"), "\n", result)
            self.query_one(f"#result-{name}", Static).update(result)
            self.query_one(f"#pool-{name}", Static).update(Group(PoolGrid(frame.pool, frame.marks)))

    def _steps(self, index: int) -> int:
        """Micro-steps of operation ``index`` in the column that took more of them."""
        side = self.side
        if side is None:
            raise RuntimeError("the sessions are still running: no steps to count")
        return max(len(session.records[index].frame_range) for session in side.sessions)

    def _frame_index(self, record: OpRecord) -> int:
        if self.micro is None:
            return record.last_frame
        return min(record.first_frame + self.micro, record.last_frame)

    # ----------------------------------------------------------------- keys

    def action_step(self, delta: int) -> None:
        self.action_go(self.index + delta)

    def action_go(self, index: int) -> None:
        if self.side is None or not self.side.count:
            return
        self.index = max(0, min(index, self.side.count - 1))
        self.micro = None   # a whole operation again: its outcome
        self.show()

    def action_micro(self, delta: int) -> None:
        """One micro-step in both columns; past an operation's end, on into the next one."""
        if self.side is None or not self.side.count:
            return
        k = self.index
        step = (self._steps(k) - 1 if self.micro is None else self.micro) + delta
        if step >= self._steps(k):
            if k + 1 < self.side.count:
                k, step = k + 1, 0
            else:
                step = self._steps(k) - 1          # the last step of the last operation
        elif step < 0:
            if k > 0:
                k -= 1
                step = self._steps(k) - 1
            else:
                step = 0
        self.index, self.micro = k, step
        self.show()

    def action_last(self) -> None:
        if self.side is not None:
            self.action_go(self.side.count - 1)

    def action_divergence(self) -> None:
        if self.side is None:
            return
        if self.side.diverged is None:
            self.notify(f"the two {self.noun} agree on every operation here", timeout=3)
            return
        self.action_go(self.side.diverged)

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_quit_app(self) -> None:
        self.app.action_quit()   # a sandbox below may hold unsaved work: it asks first

