"""Gaps on real sockets: dropped batches come back through the replay socket; what the
publisher no longer has is reported, counted, and the stream goes on."""
from __future__ import annotations

import time

from radixviz.wire.messages import AllBlocksCleared, BlockRemoved, BlockStored
from radixviz.wire.subscriber import Watcher

from wire_helpers import HANG_GUARD_S, close, joined, receive, tree_json


def chain(n: int) -> list:
    """n batches: a clear, then one page a batch, each under the one before."""
    return [[AllBlocksCleared(), BlockStored([1], None, [1], 1, None, "GPU")]] + \
        [[BlockStored([i], i - 1, [i], 1, None, "GPU")] for i in range(2, n + 1)]


def held(watcher) -> list:
    return [b["hash"] for b in tree_json(watcher)]


def test_dropped_batches_are_recovered_through_replay():
    # the watcher polls only after all 8 went out: one replay, asked at seq 4, brings 2, 3 and 6
    pub, watcher = joined(drop={2, 3, 6})
    try:
        for batch in chain(8):
            pub.publish(batch)
        got = receive(pub, watcher, 8)
        assert [a.seq for a in got] == list(range(8))
        assert held(watcher) == list(range(1, 9))
        problems = watcher.core.problems
        assert (problems.gaps, problems.recovered, problems.unfilled) == (1, 3, 0)
    finally:
        close(pub, watcher)


def test_a_gap_the_buffer_no_longer_holds_is_reported_and_the_stream_goes_on():
    # the buffer keeps 2 batches; seq 1 is dropped and by the time the watcher asks (it
    # polls only after all are sent) seqs 1 and 2 have left the buffer: 2 came live, 1 is lost
    pub, watcher = joined(drop={1}, buffer_steps=2)
    try:
        for batch in chain(5):
            pub.publish(batch)
        got = receive(pub, watcher, 4)
        assert [a.seq for a in got] == [0, 2, 3, 4]
        problems = watcher.core.problems
        assert (problems.gaps, problems.unfilled) == (1, 1)
        assert problems.missing_parents == 1        # page 3's parent, page 2, never came
        assert any("seq 1 lost" in line for line in watcher.core.log)
        assert held(watcher) == [1, 3, 4, 5]
        assert watcher.core.tree(0).orphans() == 1
    finally:
        close(pub, watcher)


def test_without_a_replay_socket_a_gap_is_lost_at_once():
    pub, watcher = joined(replay=False, drop={1})
    try:
        for batch in chain(3):
            pub.publish(batch)
        assert [a.seq for a in receive(pub, watcher, 2)] == [0, 2]
        assert watcher.core.problems.unfilled == 1
    finally:
        close(pub, watcher)


def test_a_removal_of_a_block_never_stored_is_counted():
    pub, watcher = joined()
    try:
        pub.publish([AllBlocksCleared(), BlockRemoved([42], "GPU"), BlockRemoved([42], None)])
        receive(pub, watcher, 1)
        assert watcher.core.problems.unknown_removals == 2
    finally:
        close(pub, watcher)


def test_a_watcher_that_joins_late_asks_for_the_history():
    pub, watcher = joined()
    late = None
    try:
        pub.publish(chain(1)[0])
        receive(pub, watcher, 1)
        late = Watcher(pub.endpoint, pub.replay_endpoint, "kv-events")   # joins after seq 0 went out
        deadline = time.monotonic() + HANG_GUARD_S
        while pub.subscribers < 2:
            assert time.monotonic() < deadline, "the late watcher never subscribed"
            pub.serve(0.05)
        pub.publish([BlockStored([2], 1, [2], 1, None, "GPU")])
        got = receive(pub, late, 2)
        assert [a.seq for a in got] == [0, 1] and held(late) == [1, 2]
    finally:
        close(pub, watcher, *([late] if late else []))
