"""SGLang's KV-event structs in the two shapes servers send (messages.py encodes and decodes).

- 9fbe6800a (March 2026; ``disaggregation/kv_events.py``): each event an *array* led by its
  class name (msgspec ``array_like`` with ``tag=True``): ``["BlockStored", hashes, parent,
  token_ids, block_size, lora_id, medium]``.
- v0.5.23 (2026-10-30): each event a *map* tagged ``"type"`` with the same fields in the same
  order, and ``BlockStored`` gains ``cache_salt``, ``session_id`` and ``lora_name`` after
  ``medium``; a field left at None is not sent (``omit_defaults``), except ``parent_block_hash``
  and ``lora_id``, which have no default and always go (as nil).

Both keep the batch an array ``[ts, events, attn_dp_rank]``. The v0.5.23 structs subclass the
9fbe6800a ones, so everything that reads events (blocks.py, the router) reads both alike;
``stored_metadata`` reads the new fields of either (None for 9fbe6800a's).
"""
from __future__ import annotations

from typing import ClassVar, Union

import msgspec

WIRE_ARRAYS = "9fbe6800a"   # SGLang until the events became maps (after 2026-08-20)
WIRE_MAPS = "v0.5.23"       # SGLang v0.5.23 (2026-10-30)
WIRE_VLLM = "vllm"          # vLLM: the batch itself is a map (vllm.py)
WIRE_WORDS = {WIRE_ARRAYS: "SGLang's wire of 9fbe6800a (events as arrays)",
              WIRE_MAPS: "SGLang v0.5.23's wire (events as maps)",
              WIRE_VLLM: "vLLM's wire (batches as maps)"}


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
    wire: ClassVar[str] = WIRE_ARRAYS


class BlockStoredMap(BlockStored, array_like=False, tag="BlockStored", tag_field="type"):
    """v0.5.23's BlockStored. ``block_hashes`` and the parent are namespaced (the adapter's
    extra key, and under ``format: dynamo`` the cache salt, folded in: docs/wire.md);
    ``cache_salt`` is the storing request's salt, ``session_id`` its session (attribution
    only), ``lora_name`` the adapter's public name."""
    cache_salt: str | None = None
    session_id: str | None = None
    lora_name: str | None = None


class BlockRemovedMap(BlockRemoved, array_like=False, tag="BlockRemoved", tag_field="type"):
    """v0.5.23's BlockRemoved: one carries every page of a node (and of the nodes removed
    right after it on the same medium)."""


class AllBlocksClearedMap(AllBlocksCleared, array_like=False, tag="AllBlocksCleared", tag_field="type"):
    """v0.5.23's AllBlocksCleared."""


MapEvent = Union[BlockStoredMap, BlockRemovedMap, AllBlocksClearedMap]


class EventBatchMaps(EventBatch):
    """v0.5.23's batch: still an array ``[ts, events, attn_dp_rank]`` (the rank written
    even when None, as before), its events maps."""
    events: list[MapEvent]   # type: ignore[assignment]  # the same list, of the map-shaped events
    wire: ClassVar[str] = WIRE_MAPS


class EventBatchVllm(EventBatch):
    """A vLLM batch, read into SGLang's shapes (vllm.py)."""
    wire: ClassVar[str] = WIRE_VLLM


def batch_wire(batch: EventBatch) -> str | None:
    """The wire a decoded batch came in; None for a batch with no event to tell by."""
    return batch.wire if batch.events else None


def stored_metadata(event: BlockStored) -> tuple[str | None, str | None, str | None] | None:
    """``(cache_salt, session_id, lora_name)`` of a stored event, None when it has none of them
    (every event of 9fbe6800a's wire)."""
    if isinstance(event, BlockStoredMap) and (event.cache_salt or event.session_id or event.lora_name):
        return event.cache_salt, event.session_id, event.lora_name
    return None


def batch_of(wire: str, ts: float, events: list, rank: int | None) -> EventBatch:
    """The batch struct of SGLang's ``wire`` holding ``events`` (already in its shape)."""
    return (EventBatchMaps if wire == WIRE_MAPS else EventBatch)(ts, events, rank)
