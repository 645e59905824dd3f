"""Immutable pictures of the unified tree: per node, each component's data, lock and stamp;
per tree, each component's sizes and LRU order.

``value`` and ``ref`` (the shared NodeSnapshot's) hold the Full KV slots and the Full lock, so
a view written for one pool reads the backbone of this tree too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ...cache.snapshot import NodeSnapshot, TreeSnapshot, snapshot_subtree

if TYPE_CHECKING:
    from .node import ComponentType, UnifiedTreeNode


class ComponentSnapshot(NamedTuple):
    """One component's part of a node: slots (None: a tombstone), lock count, SWA stamp."""

    value: tuple | None
    lock_ref: int
    uuid: int | None

    @property
    def tombstone(self) -> bool:
        return self.value is None


@dataclass(frozen=True, slots=True)
class UnifiedNodeSnapshot(NodeSnapshot):
    components: tuple = ()        # ComponentSnapshot per enabled component, in the cache's order
    hit_count: int = 0
    priority: int = 0
    creation_time: int = 0


class ComponentSizes(NamedTuple):
    evictable: int
    protected: int
    lru: tuple                    # node ids, most recent first (Full keeps no list: empty)


@dataclass(frozen=True)
class UnifiedTreeSnapshot(TreeSnapshot):
    root: UnifiedNodeSnapshot
    component_types: tuple = ()   # the enabled ComponentTypes, Full first
    sizes: tuple = ()             # ComponentSizes, one per enabled component
    page_size: int = 1
    sliding_window_size: int | None = None
    mamba_cache_chunk_size: int | None = None
    eviction_policy: str = "lru"
    engine: str = "unified"

    @property
    def settings(self) -> dict:
        return {"components": ",".join(str(ct) for ct in self.component_types),
                "page_size": self.page_size, "window": self.sliding_window_size,
                "mamba_chunk": self.mamba_cache_chunk_size, "eviction_policy": self.eviction_policy}

    def sizes_of(self, component_type: ComponentType) -> ComponentSizes:
        return self.sizes[self.component_types.index(component_type)]


def snapshot_unified_node(node: UnifiedTreeNode, component_types: tuple) -> UnifiedNodeSnapshot:
    """Snapshot of a live node, reusing the cached snapshots of unchanged subtrees."""

    def make(live: UnifiedTreeNode, kids: tuple) -> UnifiedNodeSnapshot:
        parts = []
        for ct in component_types:
            cd = live.component_data[ct]
            parts.append(ComponentSnapshot(None if cd.value is None else tuple(cd.value.tolist()),
                                           cd.lock_ref, cd.uuid))
        full = parts[0]
        return UnifiedNodeSnapshot(
            live.id, live.key, full.value or (), full.lock_ref, live.last_access_time, kids,
            len(live.key) + sum(k.subtree_tokens for k in kids), tuple(parts),
            live.hit_count, live.priority, live.creation_time)

    return snapshot_subtree(node, make)
