"""KV events: what a worker tells the world about its cache, one page at a time.

SGLang's radix cache (9fbe6800a) queues three kinds when ``enable_kv_cache_events`` is on,
with the fields of ``disaggregation/kv_events.py``: a page stored (when a node is created:
its block hash, the block before it, its tokens and its size), a page removed (when an
evicted node's slots are freed) and everything cleared (when the cache is reset, including
the reset a new cache starts with). A router or a storage tier that reads them can keep its
own picture of which pages each worker holds. A split sends nothing: the pages stay stored.
No torch here.
"""
from __future__ import annotations

from dataclasses import dataclass

MEDIUM_GPU = "GPU"  # the tier a page lives on (the host tier says CPU_PINNED)


@dataclass(frozen=True)
class BlockStored:
    """A page of KV was stored (SGLang's ``BlockStored``)."""
    block_hashes: tuple                 # one signed int64 (radix_cache sends one page per event)
    parent_block_hash: int | None    # the page before it, None for a page under the root
    token_ids: tuple                    # the page's tokens
    block_size: int
    lora_id: int | None = None
    medium: str | None = MEDIUM_GPU
    kind = "stored"

    def as_dict(self) -> dict:
        return {"kind": self.kind, "block_hashes": list(self.block_hashes),
                "parent_block_hash": self.parent_block_hash, "token_ids": list(self.token_ids),
                "block_size": self.block_size, "lora_id": self.lora_id, "medium": self.medium}


@dataclass(frozen=True)
class BlockRemoved:
    """A page of KV was freed (SGLang's ``BlockRemoved``)."""
    block_hashes: tuple
    medium: str | None = MEDIUM_GPU
    kind = "removed"

    def as_dict(self) -> dict:
        return {"kind": self.kind, "block_hashes": list(self.block_hashes), "medium": self.medium}


@dataclass(frozen=True)
class AllBlocksCleared:
    """Every page is gone (SGLang's ``AllBlocksCleared``)."""
    kind = "cleared"

    def as_dict(self) -> dict:
        return {"kind": self.kind}


KVEvent = BlockStored | BlockRemoved | AllBlocksCleared


def event_from_dict(data: dict) -> KVEvent:
    """The event ``as_dict`` wrote (a router reading events from JSON); ValueError otherwise."""
    kind = data.get("kind")
    if kind == "stored":
        return BlockStored(tuple(data["block_hashes"]), data["parent_block_hash"],
                           tuple(data["token_ids"]), data["block_size"], data.get("lora_id"),
                           data.get("medium", MEDIUM_GPU))
    if kind == "removed":
        return BlockRemoved(tuple(data["block_hashes"]), data.get("medium", MEDIUM_GPU))
    if kind == "cleared":
        return AllBlocksCleared()
    raise ValueError(f"not a KV event: kind {kind!r}")
