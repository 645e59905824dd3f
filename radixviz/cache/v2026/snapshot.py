"""Immutable pictures of today's tree: the 2024 snapshot plus locks, hits, priority, birth."""
from __future__ import annotations

from dataclasses import dataclass

from ..snapshot import NodeSnapshot, TreeSnapshot, snapshot_subtree


@dataclass(frozen=True, slots=True)
class ModernNodeSnapshot(NodeSnapshot):
    # ``ref`` (inherited) holds lock_ref, so views written for 2024 read today's locks too
    hit_count: int = 0
    priority: int = 0
    creation_time: int = 0

    @property
    def lock_ref(self) -> int:
        return self.ref


@dataclass(frozen=True)
class ModernTreeSnapshot(TreeSnapshot):
    protected_size: int = 0
    page_size: int = 1
    eviction_policy: str = "lru"
    engine: str = "2026"

    @property
    def settings(self) -> dict:
        return {"page_size": self.page_size, "eviction_policy": self.eviction_policy}


def snapshot_modern_node(node) -> ModernNodeSnapshot:
    """Snapshot of a live 2026 TreeNode, reusing the cached snapshots of unchanged subtrees."""
    return snapshot_subtree(node, _modern_snapshot)


def _modern_snapshot(node, kids: tuple) -> ModernNodeSnapshot:
    return ModernNodeSnapshot(
        node.id, node.key, tuple(node.value.tolist()), node.lock_ref,
        node.last_access_time, kids, len(node.key) + sum(k.subtree_tokens for k in kids),
        node.hit_count, node.priority, node.creation_time)
