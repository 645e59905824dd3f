"""Recordings: the raw frames a watcher received, with when and where they came.

A file starts with ``MAGIC``; then one record after another, each a 4-byte big-endian length
and a msgpack array ``[seconds since the first record, stream, channel, frames]``, channel
"pub" (the SUB socket), "replay" (a replay reply), "timeout" (the watcher gave up waiting
for a replay to end) or "wire" (which wire the stream speaks from here on: frames ``[name,
how]``, how ``given`` by ``--wire`` or ``heard`` in its batches). Played back through a fresh
WatchCore the records rebuild the same trees, gaps and bad frames included, because the core
saw exactly these frames in this order. Version 1 files (before the wire records) still read.
"""
from __future__ import annotations

import time
from typing import BinaryIO
from collections.abc import Iterator

import msgspec

MAGIC = b"radixviz-kv-recording 2\n"
MAGICS = (MAGIC, b"radixviz-kv-recording 1\n")
CHANNELS = ("pub", "replay", "timeout", "wire")
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
        self.wires: dict[int, str] = {}   # stream -> the wire last written for it
        out.write(MAGIC)

    def note_wire(self, stream: int, wire: str, how: str = "heard") -> None:
        """Write a "wire" record when ``stream``'s wire is new or changed."""
        if self.wires.get(stream) != wire:
            self.wires[stream] = wire
            self.write(stream, "wire", [wire.encode(), how.encode()])

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
    if not data.startswith(MAGICS):
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


def recorded_wires(records: list[Record]) -> tuple[list[str], str | None]:
    """The wires a recording's streams spoke, in the order first written, and the one
    ``--wire`` gave when it was made (None: each batch's was told from its bytes)."""
    wires: list[str] = []
    given = None
    for record in records:
        if record.channel == "wire" and len(record.frames) == 2:
            name = record.frames[0].decode("ascii", "replace")
            if name not in wires:
                wires.append(name)
            if record.frames[1] == b"given":
                given = name
    return wires, given
