"""SGLang's KV-event structs (disaggregation/kv_events.py at 9fbe6800a): arrays led by the
class name (msgspec ``array_like`` with ``tag=True``). messages.py encodes and decodes them."""
from __future__ import annotations

from typing import Union

import msgspec


class BlockStored(msgspec.Struct, array_like=True, omit_defaults=True, gc=False, tag=True):
    """Pages stored; ``block_hashes`` chain, the first under ``parent_block_hash``."""
    block_hashes: list[int]
    parent_block_hash: int | None
    token_ids: list[int]
    block_size: int
    lora_id: int | None
    medium: str | None = None


class BlockRemoved(msgspec.Struct, array_like=True, omit_defaults=True, gc=False, tag=True):
    """Pages freed, by the hashes their BlockStored named."""
    block_hashes: list[int]
    medium: str | None = None


class AllBlocksCleared(msgspec.Struct, array_like=True, omit_defaults=True, gc=False, tag=True):
    """Every page of this rank is gone (a cache reset; SGLang sends one first)."""


WireEvent = Union[BlockStored, BlockRemoved, AllBlocksCleared]


class EventBatch(msgspec.Struct, array_like=True, omit_defaults=True, gc=False):
    """What one publish sends: when, the events in order, and the DP rank that sent them."""
    ts: float
    events: list[WireEvent]
    attn_dp_rank: int | None = None
