"""The app of ``radixviz watch``: the watch screen fed by a live Watcher or a recording."""
from __future__ import annotations

import time

from textual.app import App

from radixviz.errors import EXIT_OK, UsageError
from radixviz.wire.core import WatchCore
from radixviz.wire.live import LiveView
from radixviz.wire.playback import feed

from .screens.watch import WatchScreen

try:   # optional: token text for --tokenizer; never downloaded
    from tokenizers import Tokenizer
except ImportError:  # pragma: no cover - the package is not a dependency
    Tokenizer = None  # type: ignore[misc,assignment]

TICK_S = 0.1


def token_decoder(path: str | None):
    """A token id -> text function from a tokenizer.json, or None."""
    if path is None:
        return None
    if Tokenizer is None:
        raise UsageError("--tokenizer needs the tokenizers package (pip install tokenizers)")
    try:
        tokenizer = Tokenizer.from_file(path)
    except Exception as exc:  # noqa: BLE001 - the library's own words, on one line
        raise UsageError(f"--tokenizer {path}: {' '.join(str(exc).split())[:200]}") from None
    return lambda token_id: tokenizer.id_to_token(token_id) or str(token_id)


class WatchApp(App):
    def __init__(self, args, core: WatchCore, watcher=None, records=None):
        super().__init__()
        self.args, self.core, self.watcher = args, core, watcher
        self.records, self.next_record = records or [], 0
        self.view = LiveView(core, token_decoder(args.tokenizer))
        self.started = self.last = time.monotonic()
        self.arrived = 0          # messages read (records played): idle counts from the last
        self.playhead = 0.0
        title = f"radixviz watch {args.endpoint}" if watcher else f"radixviz watch --file {args.file}"
        self.screen_ = WatchScreen(self.view, title)

    def on_mount(self) -> None:
        self.push_screen(self.screen_)
        self.set_interval(TICK_S, self.tick)

    def tick(self) -> None:
        before = self.core.batches
        if self.watcher is not None:
            self.watcher.poll(0)
        elif not self.screen_.paused:
            speed = 1.0 if self.args.speed is None else self.args.speed
            self.playhead += TICK_S * speed if speed > 0 else float("inf")
            while self.next_record < len(self.records) and self.records[self.next_record].t <= self.playhead:
                feed(self.core, self.records[self.next_record])
                self.next_record += 1
        now = time.monotonic()
        arrived = self.watcher.received if self.watcher is not None else self.next_record
        if arrived != self.arrived:
            self.arrived, self.last = arrived, now
        if self.core.batches != before:
            self.screen_.refresh_view()
        a = self.args
        if (a.exit_after is not None and now - self.started >= a.exit_after) or \
                (a.exit_after_idle is not None and now - self.last >= a.exit_after_idle) or \
                (a.batches is not None and self.core.batches >= a.batches):
            self.exit(EXIT_OK)


def run_watch_app(args, core: WatchCore, watcher=None, records=None) -> int:
    """Run the app until q (or an --exit-after* / --batches condition); the exit code."""
    app = WatchApp(args, core, watcher, records)
    code = app.run()
    return EXIT_OK if code is None else code
