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
from textual.timer import Timer
from textual.widgets import Footer, Static

from radixviz.render.views import stream as _stream_views  # noqa: F401 - registers the stream tree's header
from radixviz.tui.widgets.tree_pane import TreePane

# after this long without a redraw, the screen makes ahead what ← will show (wire/live.py prepare_back)
PREFETCH_AFTER_S = 0.25

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
        self.paused = False             # a recording stops playing (the feeder reads it)
        self._moment = None
        self._prefetch_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield TreePane(id="tree")
            with Vertical(id="side"):
                yield Static(Text(f"{self.title_text}\nwaiting for the first batch…", style="bold"), id="figures")
                yield Static("", id="log")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()   # before the first batch too: what it waits for, not a blank screen

    def refresh_view(self) -> None:
        app = self.app
        arrived = getattr(getattr(app, "feeder", None), "arrived_at", None)
        moment = self.view.moment(arrived)
        figures = self.query_one("#figures", Static)
        if moment is None:
            quiet = self.view.quiet_for(arrived)
            words = f"nothing from the publisher for {quiet:,.0f} s" if arrived is not None else \
                "waiting for the first batch…"
            figures.update(Text(f"{self.title_text}\n{words}", style="bold"))
            self.query_one("#log", Static).update(Text(WAITING))
            self.query_one("#tree", TreePane).show_lines([Text("root  (no batch yet)", style="bold")])
            self._moment = None
            return
        if moment is not self._moment:
            self.query_one("#tree", TreePane).show(moment)
            self._moment = moment
        place, kept = self.view.place()
        where = "live" if self.view.cursor is None else f"batch {place} of {kept} kept"
        body = Text(f"{self.title_text}\n{where}\n", style="bold")
        body.append("\n".join(moment.figures))
        body.append(f"\n\n{CAPTION}", style="dim")
        figures.update(body)
        self.query_one("#log", Static).update(Text("\n".join(self.view.core.last_notes(12))))
        self._plan_prefetch()

    def _plan_prefetch(self) -> None:
        # once the screen has been still a moment, make what ← shows next (stream batches keep
        # putting it off: a busy stream is followed, not stepped through)
        if self._prefetch_timer is not None:
            self._prefetch_timer.stop()
        self._prefetch_timer = self.set_timer(PREFETCH_AFTER_S, self._prefetch)

    def _prefetch(self) -> None:
        self._prefetch_timer = None
        trees = self.query("#tree")
        if not trees:   # the screen is going away
            return
        ahead = self.view.prepare_back(getattr(getattr(self.app, "feeder", None), "arrived_at", None))
        if ahead is not None:
            trees.first(TreePane).prefetch(ahead)

    def action_back(self) -> None:
        self.view.back()
        self.refresh_view()

    def action_forward(self) -> None:
        self.view.forward()
        self.refresh_view()

    def action_live(self) -> None:
        self.view.follow()
        self.refresh_view()

    def action_rank(self) -> None:
        self.view.next_rank()
        self.refresh_view()

    def action_pause(self) -> None:
        self.paused = not self.paused
