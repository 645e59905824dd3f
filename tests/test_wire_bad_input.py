"""A hostile or broken stream on real sockets: truncated frames, wrong types, unknown tags,
a 64 MiB frame and a flood of 100,000 events. The watcher counts each, logs one line each,
keeps going, and holds no more than its limits."""
from __future__ import annotations

import msgspec

from radixviz.wire.core import LOG_LINES
from radixviz.wire.messages import AllBlocksCleared, BlockStored, EventBatch, encode_batch, encode_seq

from wire_helpers import close, joined, receive

GOOD = encode_batch(EventBatch(1.0, [AllBlocksCleared()], 0))
BAD_PAYLOADS = [
    GOOD[:-1],                                                        # truncated
    msgspec.msgpack.encode([1.0, [["BlockStored", "ab", None, [1], 1, None, "GPU"]], 0]),  # wrong type
    msgspec.msgpack.encode([1.0, [["BlockTeleported", [1]]], 0]),      # unknown tag
    msgspec.msgpack.encode({"ts": 1.0, "events": 5}),                  # a map (vLLM's shape), wrong
    b"\x00" * (64 * 2 ** 20),                                          # 64 MiB
]


def send_raw(pub, *frames) -> None:
    pub.pub.send_multipart(list(frames))


def test_bad_frames_are_counted_and_the_stream_goes_on():
    pub, watcher = joined(replay=False)
    try:
        send_raw(pub, b"kv-events", encode_seq(0), GOOD)
        for seq, payload in enumerate(BAD_PAYLOADS, start=1):
            send_raw(pub, b"kv-events", encode_seq(seq), payload)
        send_raw(pub, b"kv-events", b"\x01\x02", GOOD)                 # a short sequence frame
        send_raw(pub, b"kv-events", encode_seq(6))                     # two frames
        send_raw(pub, b"kv-events", encode_seq(6), GOOD, b"more")      # four frames
        good = EventBatch(2.0, [BlockStored([7], None, [7], 1, None, "GPU")], 0)
        send_raw(pub, b"kv-events", encode_seq(6), encode_batch(good))
        got = receive(pub, watcher, 2)
        assert [a.seq for a in got] == [0, 6]
        problems = watcher.core.problems
        # a bad payload does not use its seq up: the good batch after them shows the gap
        # (without a replay socket, lost for good and said once)
        assert problems.bad_frames == len(BAD_PAYLOADS) + 3 and problems.unfilled == len(BAD_PAYLOADS)
        assert [b.hash for b in watcher.core.tree(0).sorted_blocks()] == [7]
        lines = list(watcher.core.log)
        assert len(lines) == problems.bad_frames + 1 and all("\n" not in line for line in lines)
        assert lines[-1].startswith("stream 0: seq 1 to 5 lost for good")
        assert any("67,108,864 bytes is over" in line for line in lines)
    finally:
        close(pub, watcher)


def test_a_flood_of_100000_events_is_taken_and_the_tree_stays_within_its_limit():
    pub, watcher = joined(replay=False)
    watcher.core.max_blocks = 50_000
    try:
        flood = [AllBlocksCleared()] + [BlockStored([i], i - 1 if i else None, [i % 50_000, 1], 2, None, "GPU")
                                        for i in range(100_000)]
        pub.publish(flood)
        pub.publish([BlockStored([10 ** 9], None, [1], 1, None, "GPU")])
        got = receive(pub, watcher, 2)
        assert [a.seq for a in got] == [0, 1]
        tree = watcher.core.tree(0)
        assert len(tree.blocks) == 50_000
        assert watcher.core.problems.over_capacity == 50_001
        # a few lines, not one a block: each kind of problem once a batch, with its count
        assert "rank 0 seq 0: 50,000 blocks not kept: 50,000 held already (first 0xc350; --max-blocks raises it)" \
            in watcher.core.log
        assert len(watcher.core.log) <= 4
    finally:
        close(pub, watcher)


def test_the_log_keeps_only_its_newest_lines():
    pub, watcher = joined(replay=False)
    try:
        for seq in range(LOG_LINES + 50):
            send_raw(pub, b"kv-events", encode_seq(seq), b"\xc1")
        send_raw(pub, b"kv-events", encode_seq(LOG_LINES + 50), GOOD)
        receive(pub, watcher, 1)
        assert watcher.core.problems.bad_frames == LOG_LINES + 50
        assert len(watcher.core.log) == LOG_LINES and watcher.core.notes == LOG_LINES + 50
    finally:
        close(pub, watcher)
