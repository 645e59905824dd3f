"""Recordings: the raw frames a watcher received, with when and where they came.

A file starts with ``MAGIC``; then one record after another, each a 4-byte big-endian length
and a msgpack array ``[seconds since the first record, stream, channel, frames]``, channel
"pub" (the SUB socket), "replay" (a replay reply) or "timeout" (the watcher gave up waiting
for a replay to end). Played back through a fresh WatchCore the records rebuild the same
trees, gaps and bad frames included, because the core saw exactly these frames in this order.
"""
from __future__ import annotations

import time
from typing import BinaryIO
from collections.abc import Iterator

import msgspec

MAGIC = b"radixviz-kv-recording 1\n"
CHANNELS = ("pub", "replay", "timeout")
MAX_RECORD = 300 * 2 ** 20    # a length past this is a damaged file, not a record


class Record(msgspec.Struct, array_like=True):
    t: float
    stream: int
    channel: str
    frames: list[bytes]


class RecordingError(ValueError):
    """A file that is not a radixviz recording, or is damaged at some record."""


class Recorder:
    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.start: float | None = None
        self.encoder = msgspec.msgpack.Encoder()
        out.write(MAGIC)

    def write(self, stream: int, channel: str, frames: list) -> None:
        now = time.monotonic()
        if self.start is None:
            self.start = now
        data = self.encoder.encode(Record(now - self.start, stream, channel, [bytes(f) for f in frames]))
        self.out.write(len(data).to_bytes(4, "big") + data)
        self.out.flush()


def read_records(data: bytes) -> Iterator[Record]:
    """The records of a recording's bytes; RecordingError at the first one that is damaged
    (the records before it have been yielded)."""
    if not data.startswith(MAGIC):
        raise RecordingError("not a radixviz recording (it does not start with the recording header)")
    decoder = msgspec.msgpack.Decoder(Record)
    at, index = len(MAGIC), 0
    while at < len(data):
        if at + 4 > len(data):
            raise RecordingError(f"record {index + 1} is cut off")
        size = int.from_bytes(data[at:at + 4], "big")
        if size > MAX_RECORD or at + 4 + size > len(data):
            raise RecordingError(f"record {index + 1} is cut off or damaged")
        try:
            record = decoder.decode(data[at + 4:at + 4 + size])
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise RecordingError(f"record {index + 1} is damaged: {exc}") from None
        if record.channel not in CHANNELS or record.stream < 0:
            raise RecordingError(f"record {index + 1}: channel {record.channel!r}, stream {record.stream}")
        yield record
        at += 4 + size
        index += 1
