"""vLLM's KV events (vllm/distributed/kv_events.py at 0181ea3 in vllm-project/vllm), read and
turned into SGLang's shapes, so one watcher reads both servers.

vLLM sends the same three frames and replay protocol, but the batch is a *map*
``{"ts", "events", "data_parallel_rank"}`` and each event a map tagged ``"type"``. A block
hash may be an int or bytes (a digest); bytes become the signed 64-bit int of their first 8
bytes, big-endian, so they key the tree the same way. ``lora_name`` is kept (SGLang v0.5.23
has the field too); fields SGLang has no place for (``extra_keys``, ``group_idx``, the
cache-spec kind and sliding window) are read and dropped: blocks of different KV-cache groups
share one tree.
"""
from __future__ import annotations

from typing import Any, Union

import msgspec

from .events import AllBlocksCleared, BlockRemoved, BlockStored, BlockStoredMap, EventBatchVllm

Hash = Union[int, bytes]


class _Stored(msgspec.Struct, tag="BlockStored", tag_field="type", gc=False):
    block_hashes: list[Hash]
    parent_block_hash: Hash | None
    token_ids: list[int]
    block_size: int
    lora_id: int | None = None
    medium: str | None = None
    lora_name: str | None = None
    extra_keys: list[Any] | None = None
    group_idx: int | None = None
    kv_cache_spec_kind: str | None = None
    kv_cache_spec_sliding_window: int | None = None


class _Removed(msgspec.Struct, tag="BlockRemoved", tag_field="type", gc=False):
    block_hashes: list[Hash]
    medium: str | None = None
    group_idx: int | None = None


class _Cleared(msgspec.Struct, tag="AllBlocksCleared", tag_field="type", gc=False):
    pass


class _Batch(msgspec.Struct, gc=False):
    ts: float
    events: list[Union[_Stored, _Removed, _Cleared]]
    data_parallel_rank: int | None = None


DECODER = msgspec.msgpack.Decoder(_Batch)


def as_int(value: Hash) -> int:
    if isinstance(value, bytes):
        return int.from_bytes(value[:8].rjust(8, b"\0"), "big", signed=True)
    return value


def decode_vllm(payload: bytes) -> EventBatchVllm:
    """SGLang's EventBatch for a vLLM payload; msgspec's errors pass through (the caller
    turns them into a WireError)."""
    raw = DECODER.decode(payload)
    events: list = []
    for e in raw.events:
        if isinstance(e, _Stored):
            parent = None if e.parent_block_hash is None else as_int(e.parent_block_hash)
            hashes = [as_int(h) for h in e.block_hashes]
            if e.lora_name is None:
                events.append(BlockStored(hashes, parent, e.token_ids, e.block_size, e.lora_id, e.medium))
            else:
                events.append(BlockStoredMap(hashes, parent, e.token_ids, e.block_size, e.lora_id,
                                             e.medium, lora_name=e.lora_name))
        elif isinstance(e, _Removed):
            events.append(BlockRemoved([as_int(h) for h in e.block_hashes], e.medium))
        else:
            events.append(AllBlocksCleared())
    return EventBatchVllm(raw.ts, events, raw.data_parallel_rank)


def is_map(payload: bytes) -> bool:
    """Whether a msgpack payload starts with a map (vLLM) rather than an array (SGLang)."""
    return bool(payload) and (0x80 <= payload[0] <= 0x8F or payload[0] in (0xDE, 0xDF))
