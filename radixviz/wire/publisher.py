"""A publisher on SGLang's KV-event wire, with the replay socket (``kv_events.py`` at
9fbe6800a and in v0.5.23: ``wire`` picks which).

Each ``publish`` sends one batch on the PUB side and keeps it in a buffer of the last
``buffer_steps`` batches; a subscriber that missed some asks the ROUTER replay socket for
everything from a sequence number and receives ``[b"", seq, payload]`` per batch it still
has, then ``[b"", -1, b""]`` (v0.5.23 puts the topic before the sequence number in both:
``[b"", topic, seq, payload]``, ``[b"", b"", -1, b""]``). Like SGLang's, the publisher binds when the endpoint holds
``*``, ``::``, ``ipc://`` or ``inproc://`` and connects otherwise (a watcher then binds), and
rank R publishes on the endpoint's port + R. The socket is an XPUB, which a SUB reads as a
PUB, so ``wait_for_subscriber`` can hold the first batch until someone listens (a PUB drops
what it sends before a subscriber has joined).

One thread: replay requests are served whenever the caller publishes or waits.
"""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable

import zmq

from .events import WIRE_ARRAYS, WIRE_MAPS, batch_of
from .messages import END_SEQ, encode_batch, encode_seq

LINGER_MS = 2000   # how long close() keeps trying to deliver what is queued


def binds(endpoint: str) -> bool:
    """Whether SGLang's publisher binds ``endpoint`` (else it connects)."""
    return "*" in endpoint or "::" in endpoint or endpoint.startswith(("ipc://", "inproc://"))


def offset_endpoint(endpoint: str, rank: int) -> str:
    """``endpoint`` for DP rank ``rank``: the TCP port moved up by the rank (``inproc`` names
    get ``_dpR``), as each rank's publisher picks its own. A ``*`` port is left as it is."""
    if rank == 0:
        return endpoint
    if endpoint.startswith("inproc://"):
        return f"{endpoint}_dp{rank}"
    base, _, port = endpoint.rpartition(":")
    if endpoint.startswith("tcp://") and port.isdigit():
        return f"{base}:{int(port) + rank}"
    return endpoint


class Publisher:
    """PUB (as XPUB) plus an optional ROUTER replay socket; ``drop`` names sequence numbers to
    buffer but not send (how tests and ``publish --drop`` make a gap on purpose); ``wire``
    the SGLang whose batches and replay answers it sends (its events must be in that shape:
    from_engine.wire_events)."""

    def __init__(self, endpoint: str, replay: str | None = None, topic: str = "",
                 buffer_steps: int = 10_000, rank: int = 0, drop: Iterable[int] = (),
                 hwm: int = 100_000, context: zmq.Context | None = None, wire: str = WIRE_ARRAYS):
        if wire not in (WIRE_ARRAYS, WIRE_MAPS):
            raise ValueError(f"a publisher speaks SGLang's {WIRE_ARRAYS} or {WIRE_MAPS} wire, not {wire!r}")
        self.wire = wire
        self.ctx = context or zmq.Context.instance()
        self.topic = topic.encode("utf-8")
        self.rank = rank
        self.drop = frozenset(drop)
        self.seq = 0
        self.buffer: deque[tuple[int, bytes]] = deque(maxlen=buffer_steps)
        self.pub = self.ctx.socket(zmq.XPUB)
        self.pub.setsockopt(zmq.XPUB_VERBOSE, 1)   # every subscriber's join, not only the first
        self.pub.set_hwm(hwm)
        self.pub.setsockopt(zmq.LINGER, LINGER_MS)
        self.replay = None
        self.subscribers = 0
        try:
            self.endpoint = self._open(self.pub, offset_endpoint(endpoint, rank), binds(endpoint))
            if replay:
                self.replay = self.ctx.socket(zmq.ROUTER)
                self.replay.setsockopt(zmq.LINGER, LINGER_MS)
                self.replay_endpoint: str | None = self._open(self.replay, offset_endpoint(replay, rank), True)
            else:
                self.replay_endpoint = None
        except zmq.ZMQError:
            self.close(linger=0)
            raise

    @staticmethod
    def _open(sock, endpoint: str, bind: bool) -> str:
        if not bind:
            sock.connect(endpoint)
            return endpoint
        sock.bind(endpoint)
        return sock.getsockopt_string(zmq.LAST_ENDPOINT)   # the port a "*" was given

    def publish(self, events: list, ts: float | None = None) -> int:
        """Send one batch (rank stamped as SGLang does); return its sequence number."""
        self.serve(0)
        seq, self.seq = self.seq, self.seq + 1
        payload = encode_batch(batch_of(self.wire, time.time() if ts is None else ts, list(events), self.rank))
        if seq not in self.drop:
            self.pub.send_multipart((self.topic, encode_seq(seq), payload))
        self.buffer.append((seq, payload))
        return seq

    def wait_for_subscriber(self, timeout_s: float) -> bool:
        """Serve until a subscriber has joined (True) or ``timeout_s`` has passed (False)."""
        deadline = time.monotonic() + timeout_s
        while not self.subscribers:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.serve(min(left, 0.1))
        return True

    def serve(self, timeout_s: float) -> None:
        """Answer replay requests and note subscriptions for up to ``timeout_s`` seconds
        (0: only what is waiting now)."""
        poller = zmq.Poller()
        poller.register(self.pub, zmq.POLLIN)
        if self.replay is not None:
            poller.register(self.replay, zmq.POLLIN)
        deadline = time.monotonic() + timeout_s
        while True:
            # past the deadline this polls with 0: whatever is already waiting is still served
            ready = dict(poller.poll(max(0, int((deadline - time.monotonic()) * 1000))))
            if not ready:
                return
            if self.pub in ready:
                self._note_subscription(self.pub.recv())
            if self.replay is not None and self.replay in ready:
                self._answer_replay(self.replay.recv_multipart())

    def _note_subscription(self, message: bytes) -> None:
        # an XPUB hears b"\x01" + topic when a subscriber joins, b"\x00" + topic when it leaves
        if message[:1] == b"\x01":
            self.subscribers += 1
        elif message[:1] == b"\x00":
            self.subscribers = max(0, self.subscribers - 1)

    def _answer_replay(self, frames: list) -> None:
        # [identity, b"", start]: what a DEALER sending [b"", start] (or a REQ) arrives as;
        # anything else is ignored, as SGLang's publisher does
        if len(frames) != 3 or len(frames[2]) != 8:
            return
        identity, start = frames[0], int.from_bytes(frames[2], "big")
        replay = self.replay
        assert replay is not None   # only called when a replay socket had a request
        # v0.5.23 answers as it publishes, topic first (the end: an empty topic)
        topic, end = ((self.topic,), (b"",)) if self.wire == WIRE_MAPS else ((), ())
        for seq, payload in self.buffer:
            if seq >= start:
                replay.send_multipart((identity, b"", *topic, encode_seq(seq), payload))
        replay.send_multipart((identity, b"", *end, encode_seq(END_SEQ), b""))

    def close(self, linger: int | None = None) -> None:
        for sock in (self.pub, self.replay):
            if sock is not None:
                sock.close(linger=LINGER_MS if linger is None else linger)
