"""The watcher's sockets: one SUB (and one DEALER for replay) per DP rank, fed to WatchCore.

SGLang's publisher binds ``tcp://*:5557`` by default, so the watcher connects; a publisher
given a host and port connects instead, and then the watcher must bind (``bind=True``).
Rank R listens on the endpoint's port + R, and asks replay on the replay port + R, as
SGLang's rank R publishes there. Replay requests go out from a DEALER as ``[b"", start]``
(a REQ socket would read only the first of the many replies).
"""
from __future__ import annotations

import itertools
import threading
import time

import zmq
import zmq.utils.monitor

from .core import Applied, ReplayRequest, WatchCore
from .messages import encode_seq
from .publisher import offset_endpoint
from .recording import Recorder

REPLAY_TIMEOUT_S = 5.0   # a replay that has not ended by then is given up (what came is kept)
HARD_MAX_MSG = 256 * 2 ** 20   # ZeroMQ drops the connection of a peer sending a bigger message
# the bytes of messages one poll reads before it hands back what it applied: each applied
# batch is held, decoded, until the caller has shown it (a 16 MiB payload of small tokens
# decodes to a few hundred MB)
BURST_BYTES = 16 * 2 ** 20
REPLAY_HWM = 256               # replies queued unread: a 15 MB reply each is the most it holds
# what the monitor of a socket reports: a drop is said, a publisher's (re)joining subscribed
MONITORED = zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED
_MONITOR_NAMES = itertools.count()


class Watcher:
    def __init__(self, endpoint: str, replay: str | None = None, topic: str = "", ranks: int = 1,
                 bind: bool = False, core: WatchCore | None = None, recorder: Recorder | None = None,
                 replay_timeout: float = REPLAY_TIMEOUT_S, context: zmq.Context | None = None):
        self.ctx = context or zmq.Context.instance()
        self.core = core or WatchCore(ranks, replay=replay is not None)
        self.recorder = recorder
        self.replay_timeout = replay_timeout
        self.subs: list = []
        self.dealers: list = []
        self.poller = zmq.Poller()
        self.sockets: dict = {}            # socket -> (stream, "pub" | "replay" | "joined")
        self.monitors: list = []
        self.topic = topic.encode("utf-8")
        # message frames read so far (published or replayed, readable or not): what
        # --exit-after-idle waits on, so a stream of batches it cannot read still counts as busy
        self.received = 0
        self.last_received_at: float | None = None
        self.dropped = 0                   # connections ZeroMQ dropped
        self.reader: threading.Thread | None = None   # the thread that reads (and closes) it, if not ours
        try:
            for rank in range(ranks):
                where = offset_endpoint(endpoint, rank)
                if bind:
                    sub = self._bound_sub(where, rank)
                else:
                    sub = self._socket(zmq.SUB)
                    sub.setsockopt(zmq.SUBSCRIBE, self.topic)
                    self._monitor(sub, rank)
                    sub.connect(where)
                self._watch(sub, rank, "pub")
                self.subs.append(sub)
                if replay is not None:
                    dealer = self._socket(zmq.DEALER)
                    dealer.setsockopt(zmq.RCVHWM, REPLAY_HWM)
                    dealer.connect(offset_endpoint(replay, rank))
                    self._watch(dealer, rank, "replay")
                    self.dealers.append(dealer)
        except zmq.ZMQError:
            self.close()
            raise
        self.endpoints = [s.getsockopt_string(zmq.LAST_ENDPOINT) for s in self.subs]
        if recorder is not None and self.core.wire is not None:
            for stream in range(ranks):
                recorder.note_wire(stream, self.core.wire, "given")

    def _socket(self, kind):
        sock = self.ctx.socket(kind)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.MAXMSGSIZE, HARD_MAX_MSG)
        sock.setsockopt(zmq.RCVHWM, 10_000)
        return sock

    def _bound_sub(self, where: str, rank: int):
        # A bound SUB of this libzmq (4.3.5, checked on 127.0.0.1) does not pass its
        # subscription to a PUB that connects later, so nothing arrives. An XSUB sends the
        # subscription itself: once more each time a publisher's handshake completes.
        sub = self._socket(zmq.XSUB)
        sub.bind(where)
        self._monitor(sub, rank, subscribe=True)
        return sub

    def _monitor(self, sock, rank: int, subscribe: bool = False) -> None:
        # ZeroMQ drops a connection without a word when a message is over MAXMSGSIZE (and
        # the batches behind it with it): its monitor is the only one to tell
        # a name of its own: pyzmq's default names it by the socket's descriptor, which a
        # socket opened just after this one closes may be given again
        monitor = sock.get_monitor_socket(MONITORED, f"inproc://radixviz-monitor-{next(_MONITOR_NAMES)}")
        self.monitors.append(monitor)
        self._watch(monitor, rank, "joined" if subscribe else "monitor")

    def _watch(self, sock, stream: int, channel: str) -> None:
        self.poller.register(sock, zmq.POLLIN)
        self.sockets[sock] = (stream, channel)

    def poll(self, timeout_s: float) -> list[Applied]:
        """Read what arrives within ``timeout_s`` (returning as soon as something was applied);
        the batches applied, oldest first."""
        deadline = time.monotonic() + timeout_s
        applied: list[Applied] = []
        taken = 0   # bytes read by this poll
        while True:
            applied += self._overdue()
            wait = 0 if applied else max(0.0, min(deadline - time.monotonic(), 0.2))
            ready = self.poller.poll(int(wait * 1000))
            for sock, _ in ready:
                stream, channel = self.sockets[sock]
                if channel in ("joined", "monitor"):
                    self._event(stream, channel, sock.recv_multipart())
                    continue
                # NOBLOCK: poll said one is there; a burst is read up to what arrived
                for _ in range(1000):
                    if taken > BURST_BYTES:
                        break
                    try:
                        frames = sock.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    taken += sum(map(len, frames))
                    applied += self._feed(stream, channel, frames)
            if applied or time.monotonic() >= deadline:
                return applied

    def _event(self, stream: int, channel: str, frames: list) -> None:
        event = zmq.utils.monitor.parse_monitor_message(frames)["event"] if len(frames) == 2 else None
        if event == zmq.EVENT_DISCONNECTED:
            self.dropped += 1
            self.core.note(f"stream {stream}: the connection to the publisher dropped: ZeroMQ drops it when "
                           f"a message is over {HARD_MAX_MSG // 2 ** 20} MiB (the most a watcher reads) or "
                           "the publisher stops; what was in flight is lost, and the next batch shows the gap")
        elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED and channel == "joined":
            self.subs[stream].send(b"\x01" + self.topic)   # subscribe the new publisher

    def _feed(self, stream: int, channel: str, frames: list) -> list[Applied]:
        self.received += 1
        self.last_received_at = time.monotonic()
        if self.recorder is not None:
            self.recorder.write(stream, channel, frames)
        take = self.core.live if channel == "pub" else self.core.replayed
        applied, requests = take(stream, frames)
        self._ask(requests)
        if self.recorder is not None and self.core.wire is None and stream in self.core.wires:
            self.recorder.note_wire(stream, self.core.wires[stream])
        return applied

    def _overdue(self) -> list[Applied]:
        applied: list[Applied] = []
        for stream in range(len(self.subs)):
            if self.core.replay_overdue(stream, self.replay_timeout):
                if self.recorder is not None:
                    self.recorder.write(stream, "timeout", [])
                done, requests = self.core.finish_replay(stream, f"gave no end after {self.replay_timeout:g} s")
                applied += done
                self._ask(requests)
        return applied

    def _ask(self, requests: list[ReplayRequest]) -> None:
        for request in requests:
            self.dealers[request.stream].send_multipart([b"", encode_seq(request.start)])

    def close(self) -> None:
        """Close the sockets (again: nothing); not while another thread reads them."""
        if self.reader is not None and self.reader.is_alive() and self.reader is not threading.current_thread():
            return
        # each watched socket stops its monitor before it and its monitor's reader close: closed
        # the other way round (libzmq 4.3.5), one close in a few dozen left the context's I/O
        # thread stuck, and no later socket of the process saw its peer (tests/test_watch_streams.py)
        monitors = set(self.monitors)
        for sock in self.sockets:
            if sock not in monitors:
                sock.disable_monitor()
                sock.close(linger=0)
        for monitor in monitors:
            monitor.close(linger=0)
        self.subs, self.dealers, self.monitors, self.sockets = [], [], [], {}
