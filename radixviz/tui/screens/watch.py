"""The watch screen: a server's cache as its KV events describe it, live or from a recording.

The tree pane is the stepper's (a stream's snapshot draws like an engine's); the figures and
the log sit beside it. ←/→ step through the batches kept, End follows the stream again,
r shows the next DP rank, space pauses a recording.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from radixviz.render.views import stream as _stream_views  # noqa: F401 - registers the stream tree's header
from radixviz.tui.widgets.tree_pane import TreePane

CAPTION = ("a stream carries no slots and no access times: 'tokens' are positions from the root, "
           "'N copies' a block sent N times (one prompt in N namespaces)")
WAITING = ("waiting for the first batch: a server publishes when its cache changes, so send it a "
           "request (radixviz publish ENDPOINT -e 'insert abc' plays one)")


class WatchScreen(Screen):
    BINDINGS = [Binding("left", "back", "earlier batch"), Binding("right", "forward", "later batch"),
                Binding("end", "live", "follow"), Binding("r", "rank", "next rank"),
                Binding("space", "pause", "pause"), Binding("q", "app.quit", "quit")]
    DEFAULT_CSS = """
    WatchScreen #side { width: 48; }
    WatchScreen #figures { height: auto; }
    WatchScreen #log { height: 1fr; color: $text-muted; }
    """

    def __init__(self, view, title: str):
        super().__init__()
        self.view, self.title_text = view, title
        self.at: int | None = None      # index into view.moments; None: the newest
        self.rank: int | None = None    # None: whichever rank sent the newest batch
        self.paused = False             # a recording stops playing (the app reads it)

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield TreePane(id="tree")
            with Vertical(id="side"):
                yield Static(Text(self.title_text, style="bold"), id="figures")
                yield Static("", id="log")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()   # before the first batch too: what it waits for, not a blank screen

    def moments(self) -> list:
        found = list(self.view.moments)
        return [m for m in found if self.rank is None or m.rank == self.rank]

    def refresh_view(self) -> None:
        moments = self.moments()
        figures = self.query_one("#figures", Static)
        if not moments:
            self.query_one("#log", Static).update(Text(WAITING))
            self.query_one("#tree", TreePane).show_lines([Text("root  (no batch yet)", style="bold")])
            return
        index = len(moments) - 1 if self.at is None else min(self.at, len(moments) - 1)
        moment = moments[index]
        self.query_one("#tree", TreePane).show(moment)
        where = "live" if self.at is None else f"batch {index + 1} of {len(moments)} kept"
        body = Text(f"{self.title_text}\n{where}\n", style="bold")
        body.append("\n".join(moment.figures))
        body.append(f"\n\n{CAPTION}", style="dim")
        figures.update(body)
        self.query_one("#log", Static).update(Text("\n".join(list(self.view.core.log)[-12:])))

    def action_back(self) -> None:
        count = len(self.moments())
        self.at = max(0, (count - 1 if self.at is None else self.at) - 1) if count else None
        self.refresh_view()

    def action_forward(self) -> None:
        if self.at is not None:
            self.at += 1
            if self.at >= len(self.moments()) - 1:
                self.at = None
        self.refresh_view()

    def action_live(self) -> None:
        self.at = None
        self.refresh_view()

    def action_rank(self) -> None:
        ranks = sorted(self.view.core.trees)
        if ranks:
            nxt = ranks[0] if self.rank is None or self.rank not in ranks else \
                ranks[(ranks.index(self.rank) + 1) % len(ranks)]
            self.rank = None if len(ranks) == 1 else nxt
        self.at = None
        self.refresh_view()

    def action_pause(self) -> None:
        self.paused = not self.paused
