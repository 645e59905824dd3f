"""Several workers behind a router (``radixviz simulate --app --workers N``): every worker's
tree side by side after each pass, or one at a time, and where each request went and why.

The run (torch, N engines, a snapshot of every tree after every pass) is computed in a worker
thread; the screen paints a loading line first. Keys step through the passes.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Static

from radixviz.render.tree import TreeView
from radixviz.tui.from_thread import call_from_thread
from radixviz.tui.screens.help import HelpScreen

REASON_MARKS = {"cache": "◆", "low-match": "○", "imbalanced": "⚖", "round-robin": "↻",
                "random": "?", "least-load": "↓"}
LOG_LINES = 8


if TYPE_CHECKING:
    from textual import getters

    from radixviz.sim.cluster import Cluster, ClusterTick
    from radixviz.tui.app_base import RadixvizAppBase


class ClusterScreen(Screen):
    if TYPE_CHECKING:   # for mypy: this screen runs in the radixviz app (Textual says App[Any])
        app = getters.app(RadixvizAppBase)
    AUTO_FOCUS = None
    DEFAULT_CSS = """
    #cluster-status { height: 1; background: $boost; }
    #cluster-trees { height: 1fr; }
    .cluster-tree { width: 1fr; border: round $primary; }
    .cluster-tree-body { width: auto; }
    #cluster-log { height: 11; max-height: 40%; border: round $secondary; }
    """
    BINDINGS = [
        Binding("right,space,n", "step(1)", "Next pass"),
        Binding("left,p", "step(-1)", "Prev pass"),
        Binding("home", "jump('first')", "First", show=False),
        Binding("end", "jump('last')", "Last", show=False),
        Binding("right_square_bracket", "next_routed(1)", "Next arrival", key_display="]"),
        Binding("left_square_bracket", "next_routed(-1)", "Prev arrival", key_display="[", show=False),
        Binding("0", "show_worker(-1)", "All workers", tooltip="every worker's tree side by side"),
        Binding("1", "show_worker(0)", "One worker", key_display="1-9",
                tooltip="one worker's tree, full width: 1 shows worker 0, 2 worker 1, ..."),
        *(Binding(str(i + 1), f"show_worker({i})", f"Worker {i}", show=False) for i in range(1, 9)),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("h", "home", "Home", show=False),
        Binding("escape,q", "back", "Back", key_display="q"),
    ]

    position = var(0)
    """Index of the pass shown."""
    only = var(-1)
    """The one worker shown full width, or -1 for all side by side."""

    def __init__(self, build: Callable[[], Cluster], title: str = "workers"):
        """``build()`` (called in a worker thread) returns a recording Cluster to run."""
        super().__init__()
        self.build, self.cluster_title = build, title
        self.cluster: Cluster | None = None   # once the worker has run it
        self.ticks: list[ClusterTick] = []

    def compose(self) -> ComposeResult:
        yield Static(Text(f" {self.cluster_title}: running every worker (torch)…"), id="cluster-status")
        yield Horizontal(id="cluster-trees")
        yield VerticalScroll(Static("", id="cluster-log-body"), id="cluster-log")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#cluster-log").border_title = "arrivals: where each went and why"
        self.app.after_first_paint(self._run)

    @work(thread=True, exclusive=True, group="cluster")
    def _run(self) -> None:
        cluster = self.build()
        cluster.run()
        call_from_thread(self.app, self._ready, cluster)

    async def _ready(self, cluster: Cluster) -> None:
        if not self.is_attached:
            return
        row = self.query_one("#cluster-trees")
        await row.mount_all([VerticalScroll(Static("", classes="cluster-tree-body"), classes="cluster-tree")
                             for _ in cluster.workers])
        # the passes become steppable only now: a key that arrived during the mount would
        # otherwise move a position that is then reset to 0
        self.position = 0
        self.cluster, self.ticks = cluster, cluster.ticks
        self._draw()

    # ------------------------------------------------------------------ drawing

    def watch_position(self) -> None:
        self._draw()

    def watch_only(self) -> None:
        self._draw()

    def _draw(self) -> None:
        cluster = self.cluster   # set with the ticks
        if cluster is None or not self.ticks or not self.is_attached:
            return
        tick = self.ticks[self.position]
        result = cluster.result()
        boxes = list(self.query(".cluster-tree"))
        for i, box in enumerate(boxes):
            box.display = self.only in (-1, i)
            load = tick.loads[i]
            stats = cluster.workers[i].stats
            box.border_title = f"worker {i} · {load.requests} in flight"
            box.border_subtitle = f"run: hit {stats.hit_rate:.0%}"
            box.query_one(Static).update(TreeView(tick.trees[i], max_edge=16, max_children=8, max_depth=6))
        self.query_one("#cluster-status", Static).update(Text(
            f" {self.cluster_title} · pass {tick.tick}/{len(self.ticks)} · hit rate (whole run) "
            f"{result.hit_rate:.1%} · balance {result.balance('requests'):.2f}"))
        self.query_one("#cluster-log-body", Static).update(self._log(cluster, tick))

    def _log(self, cluster: Cluster, tick: ClusterTick) -> Group:
        # the newest arrivals up to this pass (placed during passes 1..tick.tick)
        routes = [r for r in cluster.routes if r.tick < tick.tick][-LOG_LINES:]
        lines = []
        for r in routes:
            mark = REASON_MARKS.get(r.reason, "·")
            now = r.tick + 1 == tick.tick
            line = Text(f"{mark} pass {r.tick + 1:>3} #{r.number:<4}→ worker {r.worker}  ",
                        style="bold" if now else "")
            line.append(("chat turn back · " if r.follow_up else "") + r.text, style="" if now else "dim")
            lines.append(line)
        if not lines:
            lines.append(Text("no arrivals yet", style="dim"))
        legend = "  ".join(f"{m} {k}" for k, m in REASON_MARKS.items())
        lines.append(Text(legend, style="dim"))
        return Group(*lines)

    # ------------------------------------------------------------------ keys

    def action_step(self, delta: int) -> None:
        if self.ticks:
            self.position = max(0, min(len(self.ticks) - 1, self.position + delta))

    def action_jump(self, where: str) -> None:
        if self.ticks:
            self.position = 0 if where == "first" else len(self.ticks) - 1

    def action_next_routed(self, direction: int) -> None:
        """The next (or previous) pass in which a request arrived."""
        i = self.position + direction
        while 0 <= i < len(self.ticks):
            if self.ticks[i].routes:
                self.position = i
                return
            i += direction

    def action_show_worker(self, index: int) -> None:
        if self.cluster is not None and index < len(self.cluster.workers):
            self.only = index

    def action_help(self) -> None:
        guide = ("Each pass, the requests that arrived were placed by the router (bottom: the "
                 "newest, bold for this pass, with the reason), then every worker ran one pass of "
                 "its scheduler loop. Top: each worker's radix tree after the pass. "
                 "◆ the router believed that worker holds more than the threshold of the prompt; "
                 "○ nobody held enough, so the least loaded; ⚖ loads too uneven, so the least loaded.")
        self.app.push_screen(HelpScreen(self.BINDINGS, guide))

    def action_home(self) -> None:
        self.app.open_home()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()
