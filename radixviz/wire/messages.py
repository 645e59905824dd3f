"""SGLang's KV-event messages, encoded and decoded, in either of SGLang's wires (and vLLM's).

A message is three ZeroMQ frames: the topic, the batch's sequence number as 8 bytes
big-endian, and a msgpack ``EventBatch``: an array ``[ts, events, attn_dp_rank]``. Its events
are arrays led by their class name at 9fbe6800a and maps tagged ``"type"`` in v0.5.23
(events.py); vLLM's whole batch is a map (vllm.py). Which wire a payload is in is read off its
first bytes (``payload_wire``), so one watcher reads a stream of any of them, or a stream
that changes (a server upgraded under it); ``--wire`` names it instead.

The replay socket answers ``[b"", seq, payload]`` per batch at 9fbe6800a and
``[b"", topic, seq, payload]`` in v0.5.23, then the same with the sequence number -1
(8 bytes of 0xff) and an empty payload; ``parse_replay`` reads both.

Nothing here raises on bad input: ``decode_batch``, ``parse_message`` and ``parse_replay``
return a ``WireError`` (one line of text) for a frame they cannot read, so a listener logs it
and goes on.
"""
from __future__ import annotations

from dataclasses import dataclass

import msgspec

from .events import (WIRE_ARRAYS, WIRE_MAPS, WIRE_VLLM, AllBlocksCleared, BlockRemoved, BlockStored,
                     EventBatch, EventBatchMaps, WireEvent, batch_wire)
from .vllm import decode_vllm, is_map

__all__ = ["AllBlocksCleared", "BlockRemoved", "BlockStored", "EventBatch", "WireEvent", "WireError",
           "Message", "Reply", "encode_batch", "decode_batch", "encode_seq", "decode_seq", "encode_message",
           "parse_message", "parse_replay", "payload_wire", "END_SEQ", "DEFAULT_MAX_FRAME", "WIRES"]

WIRES = (WIRE_ARRAYS, WIRE_MAPS, WIRE_VLLM)

END_SEQ = -1                      # the replay socket's "that was all"
SEQ_BYTES = 8
DEFAULT_MAX_FRAME = 16 * 2 ** 20  # a payload past this is skipped unread (--max-frame-mb)


@dataclass(frozen=True)
class WireError:
    """A frame that could not be read, said in one line."""
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Message:
    """One decoded message: its topic, sequence number and batch, and the wire the batch
    was in (None: a batch with no event to tell by)."""
    topic: bytes
    seq: int
    batch: EventBatch
    wire: str | None = None


@dataclass(frozen=True)
class Reply:
    """One frame set of a replay answer, not yet decoded: ``topic`` is None at 9fbe6800a,
    whose answer leaves it out."""
    topic: bytes | None
    seq: int
    payload: bytes


_ENCODER = msgspec.msgpack.Encoder()
_DECODERS: dict[str, msgspec.msgpack.Decoder] = {WIRE_ARRAYS: msgspec.msgpack.Decoder(EventBatch),
                                                  WIRE_MAPS: msgspec.msgpack.Decoder(EventBatchMaps)}
# the SGLang wire the last payload read in is tried first: a stream keeps its wire, so the
# other is tried only when a payload fails (a first batch, a server upgraded under a watcher)
_FIRST_TRY = [WIRE_ARRAYS]


def encode_batch(batch: EventBatch) -> bytes:
    """The payload of ``batch``, in the wire its structs are of (events.py)."""
    return _ENCODER.encode(batch)


def payload_wire(payload: bytes) -> str | None:
    """The wire of a payload, told by its first bytes: vLLM's batch is a map; SGLang's an
    array whose first event is an array (9fbe6800a) or a map (v0.5.23). None when the batch
    has no event or the bytes are not a batch at all (the decoder then says what is wrong)."""
    if is_map(payload):
        return WIRE_VLLM
    try:
        at = _array_body(payload, 0)
        if at is None:
            return None
        at += _scalar_size(payload[at])          # the timestamp
        events = payload[at]
        if not (0x91 <= events <= 0x9F or events in (0xDC, 0xDD)):
            return None                          # no events (0x90), or not an array
        first = payload[at + {0xDC: 3, 0xDD: 5}.get(events, 1)]
    except (IndexError, KeyError):
        return None
    if 0x80 <= first <= 0x8F or first in (0xDE, 0xDF):
        return WIRE_MAPS
    if 0x90 <= first <= 0x9F or first in (0xDC, 0xDD):
        return WIRE_ARRAYS
    return None


def _array_body(data: bytes, at: int) -> int | None:
    head = data[at]
    if 0x90 <= head <= 0x9F:
        return at + 1
    return {0xDC: at + 3, 0xDD: at + 5}.get(head)


# bytes a msgpack number (or nil) takes, by its first byte; a fixint is one
_SIZES = {0xC0: 1, 0xCA: 5, 0xCB: 9, 0xCC: 2, 0xCD: 3, 0xCE: 5, 0xCF: 9, 0xD0: 2, 0xD1: 3, 0xD2: 5, 0xD3: 9}


def _scalar_size(head: int) -> int:
    if head <= 0x7F or head >= 0xE0:
        return 1
    return _SIZES[head]   # KeyError: not a number, so not a batch's timestamp


def decode_batch(payload: bytes, max_bytes: int = DEFAULT_MAX_FRAME, wire: str | None = None) -> EventBatch | WireError:
    """The batch in ``payload``, or a WireError saying why not (never an exception).
    ``wire`` reads it as that wire (``--wire``); None tells it from the payload."""
    if len(payload) > max_bytes:
        return WireError(f"payload of {len(payload):,} bytes is over the {max_bytes:,}-byte limit: skipped")
    try:
        if wire is None and is_map(payload):
            return decode_vllm(payload)
        if wire is not None:
            return decode_vllm(payload) if wire == WIRE_VLLM else _DECODERS[wire].decode(payload)
        return _decode_sglang(payload)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        said = f" (read as {wire}'s wire, as --wire says)" if wire else ""
        return WireError(f"bad payload ({len(payload):,} bytes){said}: {_one_line(exc)}")
    except Exception as exc:  # noqa: BLE001 - msgspec on a hostile frame: never let it out
        return WireError(f"bad payload ({len(payload):,} bytes): {type(exc).__name__}: {_one_line(exc)}")


def _decode_sglang(payload: bytes) -> EventBatch:
    """An SGLang payload of either wire: the last good one's decoder first, then the other;
    when both fail, the error of the one the payload's bytes point to."""
    first = _FIRST_TRY[0]
    try:
        return _DECODERS[first].decode(payload)
    except (msgspec.DecodeError, msgspec.ValidationError):
        other = WIRE_MAPS if first == WIRE_ARRAYS else WIRE_ARRAYS
        try:
            batch = _DECODERS[other].decode(payload)
        except (msgspec.DecodeError, msgspec.ValidationError):
            _DECODERS[payload_wire(payload) or first].decode(payload)   # raises: the error to report
            raise
        _FIRST_TRY[0] = other
        return batch


def encode_seq(seq: int) -> bytes:
    """8 bytes big-endian; -1 (the end of a replay) as SGLang's signed form."""
    return seq.to_bytes(SEQ_BYTES, "big", signed=seq < 0)


def decode_seq(frame: bytes) -> int | WireError:
    """The sequence number of a frame: unsigned, except 8 bytes of 0xff, which is -1."""
    if len(frame) != SEQ_BYTES:
        return WireError(f"sequence frame of {len(frame)} bytes, not {SEQ_BYTES}")
    if frame == b"\xff" * SEQ_BYTES:
        return END_SEQ
    return int.from_bytes(frame, "big")


def encode_message(topic: bytes, seq: int, batch: EventBatch) -> list[bytes]:
    return [topic, encode_seq(seq), encode_batch(batch)]


def parse_replay(frames: list[bytes]) -> Reply | WireError:
    """One answer of a replay socket, as a DEALER receives it: ``[b"", seq, payload]``
    (9fbe6800a) or ``[b"", topic, seq, payload]`` (v0.5.23); the empty delimiter may be gone
    already. The end of an answer is a Reply with seq ``END_SEQ``."""
    if len(frames) in (3, 4) and frames[0] == b"":
        frames = frames[1:]
    if len(frames) == 2:
        topic, (seq_frame, payload) = None, frames
    elif len(frames) == 3:
        topic, seq_frame, payload = (bytes(frames[0]), *frames[1:])
    else:
        return WireError(f"replay reply of {len(frames)} frames, not 2 (seq, payload) or 3 (topic, seq, payload)")
    seq = decode_seq(seq_frame)
    if isinstance(seq, WireError):
        return WireError(f"replay: {seq.text}")
    return Reply(topic, seq, payload)


def parse_message(frames: list[bytes], max_bytes: int = DEFAULT_MAX_FRAME,
                  wire: str | None = None) -> Message | WireError:
    """A published message (topic, seq, payload), or a WireError for anything else;
    ``wire`` as for ``decode_batch``."""
    if len(frames) != 3:
        return WireError(f"message of {len(frames)} frames, not 3 (topic, seq, payload)")
    topic, seq_frame, payload = frames
    seq = decode_seq(seq_frame)
    if isinstance(seq, WireError):
        return seq
    if seq == END_SEQ:
        return WireError("sequence -1 on the publish socket (only a replay ends with it)")
    batch = decode_batch(payload, max_bytes, wire)
    if isinstance(batch, WireError):
        return WireError(f"seq {seq}: {batch.text}")
    return Message(bytes(topic), seq, batch, wire or batch_wire(batch))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] + ("…" if len(text) > 200 else "")
