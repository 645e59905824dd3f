"""radixviz's engines on the wire: their KV events as wire structs, and the blocks their
tree holds (what a watcher of the stream must rebuild, read from the tree itself).

A character token goes out as its code point (``hashes.token_id``), the id its page hash
was computed from. A page the tree holds twice (the same tokens in two namespaces: SGLang's
hash does not include the namespace) is one block held twice, ``copies`` 2.
"""
from __future__ import annotations

from typing import Any

from radixviz.cache.hashes import HashedNode, hash_str_to_int64, token_id
from radixviz.cache.kv_events import MEDIUM_GPU

from .messages import AllBlocksCleared, BlockRemoved, BlockStored, WireEvent


def wire_event(event) -> WireEvent:
    """The wire struct of one engine event (cache/kv_events.py)."""
    if event.kind == "stored":
        return BlockStored(list(event.block_hashes), event.parent_block_hash,
                           [token_id(t) for t in event.token_ids], event.block_size,
                           event.lora_id, event.medium)
    if event.kind == "removed":
        return BlockRemoved(list(event.block_hashes), event.medium)
    return AllBlocksCleared()


def engine_blocks(root_node: HashedNode) -> list[dict]:
    """Every page a live tree holds, in the form ``watch --json`` prints (blocks.block_json),
    sorted the same way; found by walking the tree, not from its events."""
    held: dict = {}
    stack: list[tuple[Any, int | None]] = [(child, None) for child in root_node.children.values()]
    while stack:
        node, parent_hash = stack.pop()
        hashes = node.hash_value or []
        key = node.key
        page = len(key) // len(hashes) if hashes else len(key)
        for index, hash_str in enumerate(hashes):
            tokens = [token_id(t) for t in key[index * page:(index + 1) * page]]
            block_hash = hash_str_to_int64(hash_str)
            entry = held.setdefault((MEDIUM_GPU, block_hash), {
                "hash": block_hash, "parent": parent_hash, "token_ids": tokens,
                "block_size": len(tokens), "medium": MEDIUM_GPU, "lora_id": None, "copies": 0})
            entry["copies"] += 1
            parent_hash = block_hash
        stack.extend((child, parent_hash) for child in node.children.values())
    return [held[k] for k in sorted(held, key=lambda k: (k[0] or "", k[1]))]
