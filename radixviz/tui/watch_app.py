"""The app of ``radixviz watch``: the watch screen fed by a live Watcher or a recording.

The sockets (or the recording) are read on a thread of their own, the feeder: a batch of
100,000 events is decoded and applied there while the app's thread goes on drawing and
answering keys. The app takes what arrived (wire/live.py) a few milliseconds at a time,
and draws at most every ``DRAW_S``: a stream of a thousand batches a second costs a few
redraws a second, not a thousand.
"""
from __future__ import annotations

import threading
import time

from textual.app import App

from radixviz.errors import EXIT_OK, UsageError
from radixviz.wire.core import WatchCore
from radixviz.wire.live import DEFAULT_HISTORY_MB, LiveView
from radixviz.wire.playback import feed

from .screens.watch import WatchScreen

try:   # optional: token text for --tokenizer; never downloaded
    from tokenizers import Tokenizer
except ImportError:  # pragma: no cover - the package is not a dependency
    Tokenizer = None  # type: ignore[misc,assignment]

TICK_S = 0.05      # the app looks at what arrived this often
DRAW_S = 0.2       # and draws the tree again at most this often while batches keep coming
TAKE_S = 0.03      # time a tick may spend taking batches in (the rest is for drawing and keys)
STOP_WAIT_S = 1.0  # how long quitting waits for the feeder to let go of its sockets


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


class Feeder(threading.Thread):
    """Reads the watcher (or plays the recording) until told to stop; then closes the
    watcher itself, as its sockets belong to this thread."""

    def __init__(self, app: WatchApp) -> None:
        super().__init__(name="radixviz-watch-feeder", daemon=True)
        self.app = app
        self.stopping = threading.Event()
        self.failure: BaseException | None = None
        self.arrived_at: float | None = None     # when the last message (or record) came
        self.records_fed = 0

    def run(self) -> None:
        app = self.app
        try:
            if app.watcher is not None:
                self._listen()
            else:
                self._play()
        except BaseException as exc:  # noqa: BLE001 - said by the app, which then exits non-zero
            self.failure = exc
        finally:
            if app.watcher is not None:
                app.watcher.close()

    def _listen(self) -> None:
        watcher = self.app.watcher
        while not self.stopping.is_set():
            watcher.poll(0.05)
            if watcher.received:
                self.arrived_at = watcher.last_received_at

    def _play(self) -> None:
        app, records = self.app, self.app.records
        speed = 1.0 if app.args.speed is None else app.args.speed
        playhead, last = 0.0, time.monotonic()
        while not self.stopping.is_set() and self.records_fed < len(records):
            now = time.monotonic()
            if not app.screen_.paused:
                playhead += (now - last) * speed if speed > 0 else float("inf")
            last = now
            record = records[self.records_fed]
            if record.t > playhead:
                self.stopping.wait(min(0.05, (record.t - playhead) / max(speed, 1e-9)))
                continue
            feed(app.core, record)
            self.records_fed += 1
            self.arrived_at = time.monotonic()


class WatchApp(App):
    def __init__(self, args, core: WatchCore, watcher=None, records=None):
        super().__init__()
        self.args, self.core, self.watcher = args, core, watcher
        self.records = records or []
        self.view = LiveView(core, token_decoder(getattr(args, "tokenizer", None)),
                             history_mb=getattr(args, "history_mb", None) or DEFAULT_HISTORY_MB)
        self.started = time.monotonic()
        self.drawn_at = 0.0
        self.pending = False     # batches taken and not drawn yet
        self.feeder = Feeder(self)
        if watcher is not None:
            watcher.reader = self.feeder
        title = f"radixviz watch {args.endpoint}" if watcher else f"radixviz watch --file {args.file}"
        self.screen_ = WatchScreen(self.view, title)

    def on_mount(self) -> None:
        self.push_screen(self.screen_)
        self.feeder.start()
        self.set_interval(TICK_S, self.tick)

    def tick(self) -> None:
        if self.feeder.failure is not None:
            raise self.feeder.failure   # the app's crash path: traceback, a non-zero exit
        if self.view.take(TAKE_S):
            self.pending = True
        now = time.monotonic()
        # a key redraws at once (the screen's actions); batches at most every DRAW_S; and
        # once a second anyway, for the rates and the publisher's silence
        if (self.pending and now - self.drawn_at >= DRAW_S) or now - self.drawn_at >= 1.0:
            self.pending = False
            self.drawn_at = now
            self.screen_.refresh_view()
        a = self.args
        last = self.feeder.arrived_at if self.feeder.arrived_at is not None else self.started
        if (a.exit_after is not None and now - self.started >= a.exit_after) or \
                (a.exit_after_idle is not None and now - last >= a.exit_after_idle) or \
                (a.batches is not None and self.core.batches >= a.batches and not self.view.inbox):
            self.exit(EXIT_OK)

    def on_unmount(self) -> None:
        self.feeder.stopping.set()
        if self.feeder.is_alive():
            self.feeder.join(STOP_WAIT_S)


def run_watch_app(args, core: WatchCore, watcher=None, records=None) -> int:
    """Run the app until q (or an --exit-after* / --batches condition); the exit code."""
    app = WatchApp(args, core, watcher, records)
    app.run()
    # Textual's run() returns None after a crash (its traceback printed): the code is here
    return app.return_code or EXIT_OK
