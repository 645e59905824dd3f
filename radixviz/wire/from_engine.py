"""radixviz's engines on the wire: their KV events as wire structs, and the blocks their
tree holds (what a watcher of the stream must rebuild, read from the tree itself).

``wire_events(events, wire)`` writes one batch in either of SGLang's wires. In v0.5.23's a
stored page that continues the event before it (its parent is that event's last hash, and
medium, salt, session and adapter agree) joins it, and removals in a row on one medium join
too, as v0.5.23's ``KVCacheEventRecorder.enqueue`` does (``mem_cache/events.py:140-170``).
An engine event may carry ``cache_salt``, ``session_id`` and ``lora_name`` (an engine of
v0.5.23's, whose hashes are already namespaced): they go out as they are. The 2026 engine has
none, and its hashes are v0.5.23's for every extra key but an adapter's (docs/wire.md).

A character token goes out as its code point (``hashes.token_id``), the id its page hash
was computed from. A page the tree holds twice (the same tokens in two namespaces: SGLang's
hash does not include the namespace) is one block held twice, ``copies`` 2.
"""
from __future__ import annotations

from typing import Any

from radixviz.cache.hashes import HashedNode, hash_str_to_int64, token_id
from radixviz.cache.kv_events import MEDIUM_GPU

from .events import WIRE_ARRAYS, WIRE_MAPS, AllBlocksClearedMap, BlockRemovedMap, BlockStoredMap
from .messages import AllBlocksCleared, BlockRemoved, BlockStored, WireEvent


def wire_event(event, wire: str = WIRE_ARRAYS) -> WireEvent:
    """The wire struct of one engine event (cache/kv_events.py), in ``wire``'s shape."""
    maps = wire == WIRE_MAPS
    if event.kind == "stored":
        fields = (list(event.block_hashes), event.parent_block_hash,
                  [token_id(t) for t in event.token_ids], event.block_size, event.lora_id, event.medium)
        if not maps:
            return BlockStored(*fields)
        return BlockStoredMap(*fields, cache_salt=getattr(event, "cache_salt", None),
                              session_id=getattr(event, "session_id", None),
                              lora_name=getattr(event, "lora_name", None))
    if event.kind == "removed":
        return (BlockRemovedMap if maps else BlockRemoved)(list(event.block_hashes), event.medium)
    return AllBlocksClearedMap() if maps else AllBlocksCleared()


def wire_events(events, wire: str = WIRE_ARRAYS) -> list[WireEvent]:
    """One batch of engine events in ``wire``'s shape, joined as v0.5.23 joins them."""
    out: list[WireEvent] = []
    for event in events:
        made = wire_event(event, wire)
        if wire != WIRE_MAPS or not out or not _joined(out[-1], made):
            out.append(made)
    return out


def _joined(tail: WireEvent, event: WireEvent) -> bool:
    """Whether ``event`` went into ``tail`` (v0.5.23's rule for joining events)."""
    if isinstance(tail, BlockRemovedMap) and isinstance(event, BlockRemovedMap):
        if tail.medium == event.medium:
            tail.block_hashes.extend(event.block_hashes)
            return True
    elif isinstance(tail, BlockStoredMap) and isinstance(event, BlockStoredMap):
        same = (tail.medium, tail.lora_id, tail.block_size, tail.cache_salt, tail.session_id, tail.lora_name) == \
            (event.medium, event.lora_id, event.block_size, event.cache_salt, event.session_id, event.lora_name)
        if same and tail.block_hashes and event.parent_block_hash == tail.block_hashes[-1]:
            tail.block_hashes.extend(event.block_hashes)
            tail.token_ids.extend(event.token_ids)
            return True
    return False


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
                "block_size": len(tokens), "medium": MEDIUM_GPU, "lora_id": None, "copies": 0,
                "cache_salt": None, "session_id": None, "lora_name": None})
            entry["copies"] += 1
            parent_hash = block_hash
        stack.extend((child, parent_hash) for child in node.children.values())
    return [held[k] for k in sorted(held, key=lambda k: (k[0] or "", k[1]))]
