"""An engine's KV events on the wire while it runs (``sandbox --publish``, ``simulate --publish``).

``run --publish`` sends a finished session's batches at the end; here the events leave as
the engine makes them: after each sandbox operation, after each scheduler pass. The
ZeroMQ sockets live on one thread of their own (a socket must not be shared between
threads, and the app applies operations in workers), which also answers replay requests
between batches. The engines hand it lists of events through a queue; ``close`` sends
what is queued, then keeps answering replays for ``linger_s``.
"""
from __future__ import annotations

import queue
import threading
import time
from typing import Any
from collections.abc import Callable

import zmq

from radixviz.cache.kv_events import AllBlocksCleared as AllBlocksClearedEvent

from .events import WIRE_ARRAYS
from .from_engine import wire_events
from .publisher import Publisher

_STOP = object()


class LivePublisher:
    def __init__(self, endpoint: str, replay: str | None = None, topic: str = "kv-events",
                 wait_s: float = 0.0, linger_s: float = 0.0, wire: str = WIRE_ARRAYS):
        """Opens the sockets (on the thread) before returning: ZMQError when they cannot be.
        The first batch waits up to ``wait_s`` for a subscriber (``--publish-wait``); ``wire``
        is the SGLang whose wire it speaks (``--publish-wire``)."""
        self.wait_s, self.linger_s, self.wire = wait_s, linger_s, wire
        self.sent = 0
        self.waited_in_vain = False
        self._todo: queue.Queue = queue.Queue()
        self._opened = threading.Event()
        self._error: BaseException | None = None
        self.pub: Publisher | None = None
        self._thread = threading.Thread(target=self._run, args=(endpoint, replay, topic),
                                        name="kv-publisher", daemon=True)
        self._thread.start()
        self._opened.wait()
        if self._error is not None:
            raise self._error

    @property
    def endpoint(self) -> str:
        assert self.pub is not None
        return self.pub.endpoint

    @property
    def replay_endpoint(self) -> str | None:
        return self.pub.replay_endpoint if self.pub is not None else None

    def send(self, engine_events) -> None:
        """Queue one batch: the engine's events (cache/kv_events.py) of one step; none, nothing."""
        events = wire_events(engine_events, self.wire)
        if events:
            self._todo.put(events)

    def close(self) -> None:
        self._todo.put(_STOP)
        self._thread.join()

    def _run(self, endpoint: str, replay: str | None, topic: str) -> None:
        try:
            self.pub = Publisher(endpoint, replay, topic, wire=self.wire)
        except zmq.ZMQError as exc:
            self._error = exc
        self._opened.set()
        if self.pub is None:
            return
        pub, first = self.pub, True
        try:
            while True:
                try:
                    item = self._todo.get(timeout=0.05)
                except queue.Empty:
                    pub.serve(0)
                    continue
                if item is _STOP:
                    break
                if first:
                    self.waited_in_vain = not pub.wait_for_subscriber(self.wait_s)
                    first = False
                pub.publish(item)
                self.sent += 1
            deadline = time.monotonic() + self.linger_s
            while pub.replay is not None and time.monotonic() < deadline:
                pub.serve(min(0.1, max(0.0, deadline - time.monotonic())))
        finally:
            pub.close()


def publish_as_applied(session: Any, live: LivePublisher) -> None:
    """From now on, each operation ``session`` applies sends its KV events (one batch)."""
    apply: Callable = session.apply

    def apply_and_publish(op):
        record = apply(op)
        live.send(record.kv_events)
        return record

    session.apply = apply_and_publish


def publish_each_pass(live: LivePublisher) -> Callable:
    """For ``sim.pass_hooks.after_each_pass``: each run's engine reports KV events from its
    first pass, and each pass's events go out as one batch. A run starts on an empty cache,
    so it first sends AllBlocksCleared: a watcher of several runs (``--compare``) sees each
    run's tree, not their sum."""
    def start(sched: Any) -> Callable[[int, int], None]:
        sched.engine.cache.enable_kv_events = True   # the cache is still empty: nothing missed
        live.send([AllBlocksClearedEvent()])

        def after_pass(finished: int, total: int) -> None:
            live.send(sched.engine.take_events())
        return after_pass
    return start
