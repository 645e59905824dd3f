"""A node of SGLang v0.5.23's unified radix tree: one edge, and data per component.

Read beside ``mem_cache/unified_cache/unified_tree_core.py`` (``UnifiedTreeNode``),
``components/base.py`` (``ComponentData``) and ``component_type.py`` (``ComponentType``).
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from ...cache.text import tokens_text

if TYPE_CHECKING:
    import torch


class ComponentType(enum.IntEnum):
    """What a node can hold data for. An int so that per-node lists index by it, as SGLang's do.

    v0.5.23 also has C128 and AUXILIARY_SWA (vendor and draft pools): left out here."""

    FULL = 0
    SWA = 1
    MAMBA = 2

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, name: str) -> ComponentType:
        """``"swa"`` -> SWA; ValueError naming the choices."""
        try:
            return cls[str(name).strip().upper()]
        except KeyError:
            raise ValueError(f"unknown component {name!r}: choose from full, swa, mamba") from None


BASE_COMPONENT_TYPE = ComponentType.FULL  # the tree's backbone: a node lives while it holds Full KV


class ComponentData:
    """One component's part of a node.

    ``value`` is the component's device indices (Full and SWA: one slot a token; Mamba: one
    state slot), or None: a tombstone, the data evicted while the node stays. ``lock_ref``
    counts the requests holding this component here; ``uuid`` is the SWA window lock's
    boundary stamp (SGLang keeps it in ``metadata["uuid"]``)."""

    __slots__ = ("value", "lock_ref", "uuid")

    def __init__(self) -> None:
        self.value: torch.Tensor | None = None
        self.lock_ref = 0
        self.uuid: int | None = None


class UnifiedTreeNode:
    """One edge of the unified tree.

    ``key`` holds the edge's tokens (whole pages); ``component_data[ct]`` each component's
    data. Times are ticks of the cache's logical clock (cache_tree.py): a match stamps its
    path with times one apart, parents older than children.
    ``lru_prev``/``lru_next`` thread the node through each auxiliary component's LRU list."""

    __slots__ = ("id", "key", "children", "parent", "component_data", "last_access_time",
                 "creation_time", "hit_count", "priority", "lru_prev", "lru_next", "hash_value", "_snap")

    def __init__(self, node_id: int, last_access_time: int, creation_time: int,
                 priority: int = 0) -> None:
        self.id = node_id
        # None until the tree gives the node its edge (the root: an empty one)
        self.key: tuple = None  # type: ignore[assignment]
        self.children: dict = {}
        # None at the root only: every walk up stops there
        self.parent: UnifiedTreeNode = None  # type: ignore[assignment]
        self.component_data = [ComponentData() for _ in ComponentType]
        self.last_access_time = last_access_time
        self.creation_time = creation_time
        self.hit_count = 0
        self.priority = priority
        self.lru_prev: list = [None] * len(ComponentType)
        self.lru_next: list = [None] * len(ComponentType)
        self.hash_value: list[str] | None = None  # its pages' SHA-256 chain, once KV events ask for it
        self._snap: object | None = None  # cached snapshot, dropped when this subtree changes

    def component(self, component_type: ComponentType) -> ComponentData:
        return self.component_data[component_type]

    @property
    def value(self) -> torch.Tensor | None:
        """The Full KV slots (what the other engines call a node's value)."""
        return self.component_data[BASE_COMPONENT_TYPE].value

    def full_value(self) -> torch.Tensor:
        """The Full KV slots, which every node of a device-only tree holds."""
        value = self.component_data[BASE_COMPONENT_TYPE].value
        assert value is not None, f"node #{self.id} has no Full KV"
        return value

    @property
    def lock_ref(self) -> int:
        return self.component_data[BASE_COMPONENT_TYPE].lock_ref

    @property
    def evicted(self) -> bool:
        """Full KV gone from the device (only a host tier leaves such a node in the tree)."""
        return self.parent is not None and self.component_data[BASE_COMPONENT_TYPE].value is None

    def is_leaf(self) -> bool:
        return not self.children

    def __lt__(self, other: UnifiedTreeNode) -> bool:
        # a heap of (policy key, node) falls back on this for ties, as SGLang's does
        return self.last_access_time < other.last_access_time

    def __repr__(self) -> str:
        held = " ".join(f"{ct}={'-' if cd.value is None else len(cd.value)}/{cd.lock_ref}"
                        for ct, cd in zip(ComponentType, self.component_data))
        return f"UnifiedTreeNode(#{self.id} {tokens_text((self.key or ())[:20])!r} {held})"
