"""The deferred work the tree hands its cache, after ``unified_cache/cache_action.py`` (v0.5.23).

"The tree decides, the cache executes": the tree never touches a pool. Its insert and
eviction steps append actions; the cache applies them in order (``cache.py``). An insert
pauses at a barrier whenever a step emitted an action that is not a plain free, so the
pool work is done before the walk reads the tree again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from .node import ComponentType


@dataclass(frozen=True)
class FreeDeviceKV:
    """Free slots on both sides: Full, and their SWA peers through the mapping."""

    indices: list


@dataclass(frozen=True)
class FreeDeviceKVFullOnly:
    """Free the Full side only: the SWA peers are gone already (a tombstone's, or slots the
    request freed once they left its window)."""

    indices: list


@dataclass(frozen=True)
class FreeComponentDeviceSlot:
    """Free one component's slots (SWA is given the Full indices and follows the mapping)."""

    indices: list
    component_type: ComponentType


@dataclass(frozen=True)
class SWARebuild:
    """Give a node SWA data: translate its Full slots to their SWA peers and store them."""

    node_id: int
    source_value: torch.Tensor


@dataclass(frozen=True)
class RecoverSWAWithLockedFull:
    """Restore an SWA tombstone whose Full slots are locked: keep the locked Full slots, move
    the incoming slots' SWA peers onto them, and free only the incoming Full slots."""

    node_id: int
    kept_full: torch.Tensor
    incoming_full: torch.Tensor


@dataclass(frozen=True)
class MambaEvictExcessPathStates:
    """After an insert, drop the shallowest Mamba states of the path beyond the cap."""

    tail_node_id: int


# plain frees ride along to the next barrier; anything else pauses the insert
DEFERRABLE = (FreeDeviceKV, FreeDeviceKVFullOnly)
