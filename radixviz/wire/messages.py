"""SGLang's KV-event messages (disaggregation/kv_events.py at 9fbe6800a), encoded and decoded.

A message is three ZeroMQ frames: the topic, the batch's sequence number as 8 bytes
big-endian, and a msgpack ``EventBatch``. The batch is an array ``[ts, events, attn_dp_rank]``
(msgspec writes every field of an array, a None as nil; a shorter array reads with the
defaults); each event is an array led by its class name, so
``["BlockStored", hashes, parent, token_ids, block_size, lora_id, medium]``,
``["BlockRemoved", hashes, medium]`` and ``["AllBlocksCleared"]``. The replay socket answers
with the sequence number -1 (8 bytes of 0xff) after the last batch it has.

Nothing here raises on bad input: ``decode_batch`` and ``parse_message`` return a
``WireError`` (one line of text) for a frame they cannot read, so a listener logs it and
goes on.
"""
from __future__ import annotations

from dataclasses import dataclass

import msgspec

from .events import AllBlocksCleared, BlockRemoved, BlockStored, EventBatch, WireEvent
from .vllm import decode_vllm, is_map

__all__ = ["AllBlocksCleared", "BlockRemoved", "BlockStored", "EventBatch", "WireEvent", "WireError",
           "Message", "encode_batch", "decode_batch", "encode_seq", "decode_seq", "encode_message",
           "parse_message", "END_SEQ", "DEFAULT_MAX_FRAME"]

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
    """One decoded message: its topic, sequence number and batch."""
    topic: bytes
    seq: int
    batch: EventBatch


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(EventBatch)


def encode_batch(batch: EventBatch) -> bytes:
    return _ENCODER.encode(batch)


def decode_batch(payload: bytes, max_bytes: int = DEFAULT_MAX_FRAME) -> EventBatch | WireError:
    """The batch in ``payload``, or a WireError saying why not (never an exception)."""
    if len(payload) > max_bytes:
        return WireError(f"payload of {len(payload):,} bytes is over the {max_bytes:,}-byte limit: skipped")
    try:
        if is_map(payload):   # vLLM's batches are maps (vllm.py); SGLang's are arrays
            return decode_vllm(payload)
        return _DECODER.decode(payload)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return WireError(f"bad payload ({len(payload):,} bytes): {_one_line(exc)}")
    except Exception as exc:  # noqa: BLE001 - msgspec on a hostile frame: never let it out
        return WireError(f"bad payload ({len(payload):,} bytes): {type(exc).__name__}: {_one_line(exc)}")


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


def parse_message(frames: list[bytes], max_bytes: int = DEFAULT_MAX_FRAME) -> Message | WireError:
    """A published message (topic, seq, payload), or a WireError for anything else."""
    if len(frames) != 3:
        return WireError(f"message of {len(frames)} frames, not 3 (topic, seq, payload)")
    topic, seq_frame, payload = frames
    seq = decode_seq(seq_frame)
    if isinstance(seq, WireError):
        return seq
    if seq == END_SEQ:
        return WireError("sequence -1 on the publish socket (only a replay ends with it)")
    batch = decode_batch(payload, max_bytes)
    if isinstance(batch, WireError):
        return WireError(f"seq {seq}: {batch.text}")
    return Message(bytes(topic), seq, batch)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] + ("…" if len(text) > 200 else "")
