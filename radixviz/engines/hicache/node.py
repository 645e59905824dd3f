"""A node of the two-tier tree: today's node plus a host copy and the host's own references."""
from __future__ import annotations

import torch

from radixviz.cache.text import tokens_text
from radixviz.engines.v2026.node import TreeNode as DeviceNode


class TreeNode(DeviceNode):
    """One edge of the hierarchical tree (SGLang's ``TreeNode`` with its host-tier fields).

    ``value`` holds the edge's device (GPU) slots, or None once the device copy is evicted;
    ``host_value`` holds its host-memory slots, or None until a write backs it up. A node is
    always in at least one tier: ``evicted`` (no device copy) implies ``backuped`` (a host
    copy), or the node would have been deleted. ``host_ref_counter`` protects the host copy
    from host eviction, as ``lock_ref`` protects the device copy from device eviction.
    """

    __slots__ = ("host_value", "host_ref_counter")

    parent: TreeNode    # a hierarchical node's parent is one too (the root: None, as today's)

    def __init__(self, id: int | None = None, last_access_time: int = 0, creation_time: int = 0,
                 priority: int = 0) -> None:
        super().__init__(id, last_access_time, creation_time, priority)
        # None until a write backs it up: ``backuped`` asks, and every read follows it
        self.host_value: torch.Tensor = None  # type: ignore[assignment]
        self.host_ref_counter = 0

    @property
    def evicted(self) -> bool:
        """No device copy: the KV lives on the host only (or the node is being deleted)."""
        return self.value is None

    @property
    def backuped(self) -> bool:
        """A host copy exists (written, or being written: the slots are taken at once)."""
        return self.host_value is not None

    def protect_host(self) -> None:
        """Keep the host copy from host eviction (one more host reference)."""
        self.host_ref_counter += 1

    def release_host(self) -> None:
        """Drop a host reference; RuntimeError when there is none to drop (as in SGLang)."""
        if self.host_ref_counter > 0:
            self.host_ref_counter -= 1
        else:
            raise RuntimeError("Host reference counter is already zero.")

    def __repr__(self) -> str:
        where = "host" if self.evicted else ("device+host" if self.backuped else "device")
        return (f"TreeNode(#{self.id} {tokens_text((self.key or ())[:20])!r} {where} lock={self.lock_ref} "
                f"host_ref={self.host_ref_counter} hits={self.hit_count} t={self.last_access_time})")
