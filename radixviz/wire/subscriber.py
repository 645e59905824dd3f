"""The watcher's sockets: one SUB (and one DEALER for replay) per DP rank, fed to WatchCore.

SGLang's publisher binds ``tcp://*:5557`` by default, so the watcher connects; a publisher
given a host and port connects instead, and then the watcher must bind (``bind=True``).
Rank R listens on the endpoint's port + R, and asks replay on the replay port + R, as
SGLang's rank R publishes there. Replay requests go out from a DEALER as ``[b"", start]``
(a REQ socket would read only the first of the many replies).
"""
from __future__ import annotations

import time

import zmq

from .core import Applied, ReplayRequest, WatchCore
from .messages import encode_seq
from .publisher import offset_endpoint
from .recording import Recorder

REPLAY_TIMEOUT_S = 5.0   # a replay that has not ended by then is given up (what came is kept)
HARD_MAX_MSG = 256 * 2 ** 20   # ZeroMQ drops the connection of a peer sending a bigger message


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
        try:
            for rank in range(ranks):
                where = offset_endpoint(endpoint, rank)
                if bind:
                    sub = self._bound_sub(where, rank)
                else:
                    sub = self._socket(zmq.SUB)
                    sub.setsockopt(zmq.SUBSCRIBE, self.topic)
                    sub.connect(where)
                self._watch(sub, rank, "pub")
                self.subs.append(sub)
                if replay is not None:
                    dealer = self._socket(zmq.DEALER)
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
        monitor = sub.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
        self.monitors.append(monitor)
        self._watch(monitor, rank, "joined")
        return sub

    def _watch(self, sock, stream: int, channel: str) -> None:
        self.poller.register(sock, zmq.POLLIN)
        self.sockets[sock] = (stream, channel)

    def poll(self, timeout_s: float) -> list[Applied]:
        """Read what arrives within ``timeout_s`` (returning as soon as something was applied);
        the batches applied, oldest first."""
        deadline = time.monotonic() + timeout_s
        applied: list[Applied] = []
        while True:
            applied += self._overdue()
            wait = 0 if applied else max(0.0, min(deadline - time.monotonic(), 0.2))
            ready = self.poller.poll(int(wait * 1000))
            for sock, _ in ready:
                stream, channel = self.sockets[sock]
                if channel == "joined":
                    sock.recv_multipart()
                    self.subs[stream].send(b"\x01" + self.topic)   # subscribe the new publisher
                    continue
                # NOBLOCK: poll said one is there; a burst is read up to what arrived
                for _ in range(1000):
                    try:
                        frames = sock.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    applied += self._feed(stream, channel, frames)
            if applied or time.monotonic() >= deadline:
                return applied

    def _feed(self, stream: int, channel: str, frames: list) -> list[Applied]:
        self.received += 1
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
        for sock in self.monitors + self.subs + self.dealers:
            sock.close(linger=0)
        self.subs, self.dealers, self.monitors = [], [], []
