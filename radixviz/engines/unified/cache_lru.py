"""One auxiliary component's LRU list, threaded through the tree's nodes (v0.5.23's
``UnifiedLRUList`` in ``unified_tree_core.py``).

Head is the most recent end, tail the least. SWA and Mamba each keep one; Full has none (its
eviction takes leaves by the policy's key). Left out: the host lists and the session
partition (a second sentinel, ``mid``, splitting session-held nodes from the rest).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .node import UnifiedTreeNode

if TYPE_CHECKING:
    from collections.abc import Callable

    from .node import ComponentType


class UnifiedLRUList:
    def __init__(self, component_type: ComponentType) -> None:
        self.component_type = component_type
        self._pt = int(component_type)  # which of a node's pointer slots this list uses
        self.head = UnifiedTreeNode(-1, 0, 0)
        self.tail = UnifiedTreeNode(-1, 0, 0)
        self.head.lru_next[self._pt] = self.tail
        self.tail.lru_prev[self._pt] = self.head
        self.cache: dict[int, UnifiedTreeNode] = {}
        self.version = 0  # bumped by every change, so a snapshot can reuse its last order

    def _add_node_after(self, prev_node: UnifiedTreeNode, new_node: UnifiedTreeNode) -> None:
        pt = self._pt
        new_node.lru_prev[pt] = prev_node
        new_node.lru_next[pt] = prev_node.lru_next[pt]
        prev_node.lru_next[pt].lru_prev[pt] = new_node
        prev_node.lru_next[pt] = new_node
        self.version += 1

    def _remove_node(self, node: UnifiedTreeNode) -> None:
        pt = self._pt
        node.lru_prev[pt].lru_next[pt] = node.lru_next[pt]
        node.lru_next[pt].lru_prev[pt] = node.lru_prev[pt]
        node.lru_prev[pt] = None
        node.lru_next[pt] = None
        self.version += 1

    def insert_mru(self, node: UnifiedTreeNode) -> None:
        assert node.id not in self.cache
        self.cache[node.id] = node
        self._add_node_after(self.head, node)

    def insert_after(self, prev_node: UnifiedTreeNode, node: UnifiedTreeNode) -> None:
        assert prev_node.id in self.cache and node.id not in self.cache
        self.cache[node.id] = node
        self._add_node_after(prev_node, node)

    def remove_node(self, node: UnifiedTreeNode) -> None:
        assert node.id in self.cache
        del self.cache[node.id]
        self._remove_node(node)

    def reset_node_mru(self, node: UnifiedTreeNode) -> None:
        assert node.id in self.cache
        self._remove_node(node)
        self._add_node_after(self.head, node)

    def reset_node_and_window_ancestors_mru(self, node: UnifiedTreeNode, root_node: UnifiedTreeNode,
                                            window_size: int,
                                            should_include: Callable[[UnifiedTreeNode], bool]) -> None:
        """Move ``node`` and its ancestors to the recent end, youngest first, until their
        edges cover ``window_size`` tokens: the nodes a match or insert really reads (SWA's
        refresh). Nodes ``should_include`` refuses (tombstones) count but do not move."""
        prev = self.head
        accumulated = 0
        while node is not root_node and accumulated < window_size:
            if should_include(node):
                assert node.id in self.cache
                self._remove_node(node)
                self._add_node_after(prev, node)
                prev = node
            accumulated += len(node.key)
            node = node.parent

    def in_list(self, node: UnifiedTreeNode | None) -> bool:
        return node is not None and node.id in self.cache

    def get_prev_no_lock(self, node: UnifiedTreeNode, check_id: bool = True) -> UnifiedTreeNode | None:
        """The next node toward the recent end whose lock for this component is 0."""
        if check_id:
            assert node.id in self.cache
        pt, ct = self._pt, self.component_type
        x = node.lru_prev[pt]
        while x.component_data[ct].lock_ref > 0:
            x = x.lru_prev[pt]
        if x is self.head:
            return None
        return x

    def get_lru_no_lock(self) -> UnifiedTreeNode | None:
        """The least recent node whose lock for this component is 0 (eviction starts here)."""
        return self.get_prev_no_lock(self.tail, check_id=False)

    def order(self) -> tuple:
        """Node ids from the most recent to the least."""
        out, pt = [], self._pt
        x = self.head.lru_next[pt]
        while x is not self.tail:
            out.append(x.id)
            x = x.lru_next[pt]
        return tuple(out)
