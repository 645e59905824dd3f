"""The unified tree's KV events, as v0.5.23 records them (``mem_cache/events.py``
``KVCacheEventRecorder``, called from ``unified_tree_core.py``): a page stored for each page of
a new node (``_add_new_node``), one removal carrying every page of a node when its Full KV
leaves the tree (``_release_all_component_layers``), everything cleared at each reset (the
cache's constructor resets too). Off unless asked for (``enable_kv_events``).

Only the Full KV is on the wire: an SWA tombstone, a window lock, a Mamba state kept or
evicted send nothing in v0.5.23. A split sends nothing either; the page hashes are SGLang's
SHA-256 chain (cache/hashes.py), with no namespace seed (namespaces are left out here).
Joining a stored page to the event before it is the wire's (wire/from_engine.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...cache.hashes import compute_node_hash_values, hash_str_to_int64
from ...cache.kv_events import MEDIUM_GPU, AllBlocksCleared, BlockRemoved, BlockStored

if TYPE_CHECKING:
    from ...cache.kv_events import KVEvent
    from .node import UnifiedTreeNode


class KVCacheEventRecorder:
    """Queues the tree's KV events; every call does nothing while it is off."""

    def __init__(self, enabled: bool, page_size: int) -> None:
        self.enabled, self.page_size = enabled, page_size
        self._queue: list[KVEvent] = []

    def _hashes(self, node: UnifiedTreeNode) -> list[str]:
        if node.hash_value is None:
            node.hash_value = compute_node_hash_values(node, self.page_size)
        return node.hash_value

    def record_store(self, node: UnifiedTreeNode) -> None:
        """One BlockStored a page of ``node``, each chained to the page before it."""
        if not self.enabled:
            return
        hashes = self._hashes(node)
        parent = node.parent
        before = parent.hash_value[-1] if parent.parent is not None and parent.hash_value else None
        parent_hash = hash_str_to_int64(before) if before is not None else None
        for index, start in enumerate(range(0, len(node.key), self.page_size)):
            tokens = tuple(node.key[start:start + self.page_size])
            block = hash_str_to_int64(hashes[index])
            self._queue.append(BlockStored((block,), parent_hash, tokens, len(tokens), None, MEDIUM_GPU))
            parent_hash = block

    def record_remove(self, node: UnifiedTreeNode) -> None:
        """One BlockRemoved with every page of ``node``."""
        if self.enabled and node.key:
            self._queue.append(BlockRemoved(tuple(hash_str_to_int64(h) for h in self._hashes(node)), MEDIUM_GPU))

    def record_all_cleared(self) -> None:
        if self.enabled:
            self._queue.append(AllBlocksCleared())

    def take(self) -> list[KVEvent]:
        """The events queued since the last call, oldest first; the queue is emptied."""
        events, self._queue = self._queue, []
        return events
