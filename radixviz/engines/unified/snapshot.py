"""Immutable pictures of the unified tree: per node, each component's data, lock and stamp;
per tree, each component's sizes and LRU order.

``value`` and ``ref`` (the shared NodeSnapshot's) hold the Full KV slots and the Full lock, so
a view written for one pool reads the backbone of this tree too; ``parts`` and ``held`` say
the same of every component in the engine contract's words (contract.py), which the shared
views draw: a pool a component, a part a node, ``⊘`` for a tombstone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ...cache.contract import Component, Held, NodePart
from ...cache.snapshot import NodeSnapshot, TreeSnapshot, snapshot_subtree
from .node import ComponentType

if TYPE_CHECKING:
    from .node import UnifiedTreeNode

# its components as the contract declares them, the backbone first (SGLang's order)
FULL_KV = Component("full", "Full KV pool · full attention, a slot a token", "slots")
SWA_KV = Component("swa", "SWA KV pool · sliding window, each slot a Full slot's peer", "swa", touched="swa_slots")
MAMBA_STATE = Component("mamba", "Mamba state pool · one state a node", "state", unit="state", touched="mamba_slots")
DECLARED = {ComponentType.FULL: FULL_KV, ComponentType.SWA: SWA_KV, ComponentType.MAMBA: MAMBA_STATE}


class ComponentSnapshot(NamedTuple):
    """One component's part of a node: slots (None: a tombstone), lock count, SWA stamp."""

    value: tuple | None
    lock_ref: int
    uuid: int | None
    component_type: ComponentType = ComponentType.FULL

    @property
    def tombstone(self) -> bool:
        return self.value is None


@dataclass(frozen=True, slots=True)
class UnifiedNodeSnapshot(NodeSnapshot):
    components: tuple = ()        # ComponentSnapshot per enabled component, in the cache's order
    hit_count: int = 0
    priority: int = 0
    creation_time: int = 0

    @property
    def parts(self) -> tuple[NodePart, ...]:
        return tuple(NodePart(DECLARED[c.component_type], c.value, c.lock_ref) for c in self.components)

    def part(self, component_type: ComponentType) -> ComponentSnapshot | None:
        """Its part of ``component_type`` (None: the tree has no such component)."""
        return next((c for c in self.components if c.component_type == component_type), None)


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
        """Its options under the registry's names (cache/options.py)."""
        return {"components": tuple(str(ct) for ct in self.component_types),
                "page_size": self.page_size, "window": self.sliding_window_size,
                "mamba_chunk": self.mamba_cache_chunk_size, "eviction_policy": self.eviction_policy}

    @property
    def components(self) -> tuple[Component, ...]:
        return tuple(DECLARED[ct] for ct in self.component_types)

    @property
    def held(self) -> tuple[Held, ...]:
        return tuple(Held(DECLARED[ct], s.evictable, s.protected) for ct, s in zip(self.component_types, self.sizes))

    @property
    def protected_size(self) -> int:
        return self.sizes[0].protected if self.sizes else 0

    def sizes_of(self, component_type: ComponentType) -> ComponentSizes:
        return self.sizes[self.component_types.index(component_type)]


def snapshot_unified_node(node: UnifiedTreeNode, component_types: tuple) -> UnifiedNodeSnapshot:
    """Snapshot of a live node, reusing the cached snapshots of unchanged subtrees."""

    def make(live: UnifiedTreeNode, kids: tuple) -> UnifiedNodeSnapshot:
        parts = []
        for ct in component_types:
            cd = live.component_data[ct]
            parts.append(ComponentSnapshot(None if cd.value is None else tuple(cd.value.tolist()),
                                           cd.lock_ref, cd.uuid, ct))
        full = parts[0]
        return UnifiedNodeSnapshot(
            live.id, live.key, full.value or (), full.lock_ref, live.last_access_time, kids,
            len(live.key) + sum(k.subtree_tokens for k in kids), tuple(parts),
            live.hit_count, live.priority, live.creation_time)

    return snapshot_subtree(node, make)
