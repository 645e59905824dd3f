"""The KV events of today's cache: SGLang's ``_record_store_event``, ``_record_remove_event``,
``_record_all_cleared_event`` and ``take_events`` (radix_cache.py at 9fbe6800a), in the same shape.

``RadixCache`` (cache.py) inherits them; the lines of cache.py that call them carry the step
markers (``kv.stored``, ``kv.removed``, ``kv.cleared``), so the code pane shows where in the
algorithm an event is born. Each event is also reported to the tracer, one step a page.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.hashes import compute_node_hash_values, hash_str_to_int64
from radixviz.cache.kv_events import AllBlocksCleared, BlockRemoved, BlockStored
from radixviz.cache.snapshot import invalidate
from radixviz.cache.trace import EventKind as K, Tracer
from .node import TreeNode

if TYPE_CHECKING:
    from radixviz.cache.kv_events import KVEvent


class KVEventRecorder:
    """What a cache with ``enable_kv_events``, ``kv_event_queue``, ``page_size``, ``root_node``
    and ``tracer`` needs to queue SGLang's KV events."""

    # set by the cache that inherits these methods (cache.py)
    enable_kv_events: bool
    kv_event_queue: list
    page_size: int
    root_node: TreeNode
    tracer: Tracer

    def take_events(self) -> list:
        """The KV events queued since the last call, oldest first, and an empty queue after
        (always empty unless ``enable_kv_events``)."""
        if not self.enable_kv_events:
            return []
        events, self.kv_event_queue = self.kv_event_queue, []
        return events

    def _record_store_event(self, node: TreeNode) -> None:
        # one "stored" a page, each naming the page before it (None under the root); the
        # node's hashes are computed here, the first time anything needs them
        if not self.enable_kv_events:
            return
        if node.hash_value is None:
            node.hash_value = compute_node_hash_values(node, self.page_size)
            if node._snap is not None: invalidate(node)
        parent_block_hash = None
        parent = node.parent
        if parent is not None and parent is not self.root_node and parent.hash_value:
            parent_block_hash = hash_str_to_int64(parent.hash_value[-1])
        for index, start in enumerate(range(0, len(node.key), self.page_size)):
            page_tokens = node.key[start:start + self.page_size]
            block_hash = hash_str_to_int64(node.hash_value[index])
            self._queue_event(BlockStored((block_hash,), parent_block_hash, page_tokens,
                                          len(page_tokens)), (node,))
            parent_block_hash = block_hash

    def _record_remove_event(self, node: TreeNode) -> None:
        # one "removed" a page of an evicted node, under the hashes its "stored" named
        if not self.enable_kv_events:
            return
        if node.hash_value is None:
            node.hash_value = compute_node_hash_values(node, self.page_size)
        for index, _start in enumerate(range(0, len(node.key), self.page_size)):
            self._queue_event(BlockRemoved((hash_str_to_int64(node.hash_value[index]),)), ())

    def _record_all_cleared_event(self) -> None:
        if self.enable_kv_events:
            self._queue_event(AllBlocksCleared(), (self.root_node,))

    def _queue_event(self, event: KVEvent, nodes: tuple) -> None:
        self.kv_event_queue.append(event)
        if self.tracer.active: self.tracer.emit(f"kv.{event.kind}", K.KV_EVENT, nodes, event=event)
