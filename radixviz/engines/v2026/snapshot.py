"""Immutable pictures of today's tree: the 2024 snapshot plus locks, hits, priority, birth,
namespace and page hashes."""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

from radixviz.cache.contract import DEVICE, Held
from radixviz.cache.keys import get_child_key
from radixviz.cache.snapshot import NodeSnapshot, TreeSnapshot, snapshot_subtree

if TYPE_CHECKING:
    from .node import TreeNode
    from collections.abc import Hashable


@dataclass(frozen=True, slots=True)
class ModernNodeSnapshot(NodeSnapshot):
    # ``ref`` (inherited) holds lock_ref, so views written for 2024 read today's locks too
    hit_count: int = 0
    priority: int = 0
    creation_time: int = 0
    extra_key: object = None        # the namespace (None: none)
    hash_value: tuple | None = None  # one hex SHA-256 a page, None until computed

    @property
    def lock_ref(self) -> int:
        return self.ref

    def child_for(self, key: tuple, page_size: int = 1, start: int = 0, extra_key: Hashable | None = None):
        """The child whose edge can share a prefix with ``key[start:]`` in namespace
        ``extra_key``, or None."""
        wanted = get_child_key(key, page_size, start, extra_key)
        for child in self.children:
            if get_child_key(child.key, page_size, 0, child.extra_key) == wanted:
                return child
        return None


@dataclass(frozen=True)
class ModernTreeSnapshot(TreeSnapshot):
    root: ModernNodeSnapshot
    protected_size: int = 0
    page_size: int = 1
    eviction_policy: str = "lru"
    engine: str = "2026"
    kv_events: bool = False

    @property
    def settings(self) -> dict:
        return {"page_size": self.page_size, "eviction_policy": self.eviction_policy,
                "kv_events": self.kv_events}

    @property
    def held(self) -> tuple[Held, ...]:
        return (Held(DEVICE, self.evictable_size, self.protected_size),)

    @property
    def namespaces(self) -> tuple:
        """The extra keys of the root's children, in the order they first appear (None, the
        keys without a namespace, among them when there are such keys)."""
        return tuple(dict.fromkeys(child.extra_key for child in self.root.children))


def snapshot_modern_node(node: TreeNode) -> ModernNodeSnapshot:
    """Snapshot of a live 2026 TreeNode, reusing the cached snapshots of unchanged subtrees."""
    return snapshot_subtree(node, _modern_snapshot)


def _modern_snapshot(node: TreeNode, kids: tuple) -> ModernNodeSnapshot:
    return ModernNodeSnapshot(
        node.id, node.key, tuple(node.value.tolist()), node.lock_ref,
        node.last_access_time, kids, len(node.key) + sum(k.subtree_tokens for k in kids),
        node.hit_count, node.priority, node.creation_time, node.extra_key,
        None if node.hash_value is None else tuple(node.hash_value))
