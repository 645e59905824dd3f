"""Helpers for the KV-event wire tests: a publisher and a watcher on 127.0.0.1, joined."""
from __future__ import annotations

import time

from radixviz.wire.blocks import block_json
from radixviz.wire.publisher import Publisher
from radixviz.wire.subscriber import Watcher

HANG_GUARD_S = 60.0   # only a hang guard: every wait below ends as soon as its data is there
LOCAL = "tcp://127.0.0.1:*"


def joined(replay: bool = True, topic: str = "kv-events", **publisher) -> tuple[Publisher, Watcher]:
    """A publisher bound on a free local port (and a replay socket) and a watcher connected
    to it, returned once the publisher has seen the subscription."""
    pub = Publisher(LOCAL, LOCAL if replay else None, topic, **publisher)
    watcher = Watcher(pub.endpoint, pub.replay_endpoint, topic)
    assert pub.wait_for_subscriber(HANG_GUARD_S), "the watcher never subscribed"
    return pub, watcher


def receive(pub: Publisher, watcher: Watcher, count: int) -> list:
    """Serve and poll until ``count`` batches were applied; the Applied records."""
    got: list = []
    deadline = time.monotonic() + HANG_GUARD_S
    while len(got) < count:
        assert time.monotonic() < deadline, f"only {len(got)} of {count} batches arrived"
        pub.serve(0.01)
        got += watcher.poll(0.05)
    return got


def tree_json(watcher: Watcher, rank: int = 0) -> list:
    return [block_json(b) for b in watcher.core.tree(rank).sorted_blocks()]


def close(*things) -> None:
    for thing in things:
        thing.close(linger=0) if isinstance(thing, Publisher) else thing.close()
