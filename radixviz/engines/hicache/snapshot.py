"""Immutable pictures of the two-tier tree: today's snapshot plus where each node's KV lives."""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

from radixviz.cache.contract import Component, Held, NodePart
from radixviz.cache.snapshot import snapshot_subtree
from radixviz.engines.v2026.snapshot import ModernNodeSnapshot, ModernTreeSnapshot

if TYPE_CHECKING:
    from .node import TreeNode
    # the half of HiRadixCache (cache.py, which imports this module) that declares the tree's
    # state: typed by it, so that cache.py and this module do not import each other
    from .cache_transfers import HostTransfers


# its two tiers (contract.py): the device pool, the backbone (a node whose device copy was
# evicted stays, a tombstone of it, while its host copy lasts), and the host pool
DEVICE_TIER = Component("device", "GPU · device pool", "slots")
HOST_TIER = Component("host", "CPU · host pool", "host", touched="host_slots")


@dataclass(frozen=True, slots=True)
class HiNodeSnapshot(ModernNodeSnapshot):
    # ``value`` (inherited) is () for a node with no device copy
    host_value: tuple | None = None   # host slots, or None: no host copy
    host_ref: int = 0                 # host_ref_counter: protections of the host copy
    evicted: bool = False             # no device copy
    in_flight: str = ""               # "write" (to the host) or "load" (to the device) not yet acknowledged

    @property
    def backuped(self) -> bool:
        return self.host_value is not None

    @property
    def parts(self) -> tuple[NodePart, ...]:
        return (NodePart(DEVICE_TIER, None if self.evicted else self.value, self.ref),
                NodePart(HOST_TIER, self.host_value, self.host_ref))

    @property
    def tier(self) -> str:
        """Where the KV lives: ``device``, ``host`` or ``both`` (the root: ``device``)."""
        if self.evicted:
            return "host"
        return "both" if self.host_value is not None and self.key else "device"


@dataclass(frozen=True)
class HiTreeSnapshot(ModernTreeSnapshot):
    engine: str = "hicache"
    write_policy: str = "write_through"
    host_size: int = 0          # slots in the host pool
    host_used: int = 0          # slots in use there (copies being written included)
    device_tokens: int = 0      # tokens with a device copy (locked or evictable)
    writes_in_flight: int = 0
    loads_in_flight: int = 0
    # the 9fbe6800a bugs (cache_head_bugs.py): which are on, and the damage they did
    head_bugs: tuple = ()
    unreachable: tuple = ()     # (node id, key, device slots, host slots) of nodes the cache
                                # still holds (candidates, loads, or below one) but the root cannot reach
    double_freed: tuple = ()    # host slots freed while already free, oldest first
    reports: tuple = ()         # where SGLang's file would have stopped on an assert
    host_accounting: str = ""   # the host pool's one line on its broken accounting ('' if sound)
    host_leaves: int = 0        # host-eviction candidates the cache keeps (a head bug can leave stale ones)

    @property
    def settings(self) -> dict:
        return {"page_size": self.page_size, "eviction_policy": self.eviction_policy,
                "kv_events": self.kv_events, "host_size": self.host_size,
                "write_policy": self.write_policy, "head_bugs": self.head_bugs}

    @property
    def total_size(self) -> int:
        """Tokens on the device, as ``total_size()`` counts them (host-only nodes excluded)."""
        return self.device_tokens

    @property
    def components(self) -> tuple[Component, ...]:
        return (DEVICE_TIER, HOST_TIER)

    @property
    def held(self) -> tuple[Held, ...]:
        """The device tier's counters; on the host, copies of host-only nodes nobody protects
        (what host eviction may free) and protected ones."""
        free_to_go = guarded = 0
        for node in self.root.walk():
            if isinstance(node, HiNodeSnapshot) and node.key and node.host_value is not None:
                if node.host_ref > 0:
                    guarded += len(node.host_value)
                elif node.evicted:
                    free_to_go += len(node.host_value)
        return (Held(DEVICE_TIER, self.evictable_size, self.protected_size), Held(HOST_TIER, free_to_go, guarded))

    @property
    def host_tokens(self) -> int:
        return sum(len(n.host_value) for n in self.root.walk()   # (every node is a HiNodeSnapshot)
                   if isinstance(n, HiNodeSnapshot) and n.key and n.host_value is not None)


def hicache_snapshot(cache: HostTransfers) -> HiTreeSnapshot:
    """A picture of ``cache`` (a HiRadixCache) as it is now, reusing unchanged subtrees."""
    writing = cache.ongoing_write_through
    loading = {node.id for nodes in cache.loading_nodes.values() for node in nodes}

    def make(node: TreeNode, kids: tuple) -> HiNodeSnapshot:
        evicted = node.value is None
        in_flight = "write" if node.id in writing else ("load" if node.id in loading else "")
        return HiNodeSnapshot(
            node.id, node.key, () if evicted else tuple(node.value.tolist()), node.lock_ref,
            node.last_access_time, kids, len(node.key) + sum(k.subtree_tokens for k in kids),
            node.hit_count, node.priority, node.creation_time, node.extra_key,
            None if node.hash_value is None else tuple(node.hash_value),
            None if node.host_value is None else tuple(node.host_value.tolist()),
            node.host_ref_counter, evicted, in_flight)

    host = cache.token_to_kv_pool_host
    return HiTreeSnapshot(snapshot_subtree(cache.root_node, make), cache.evictable_size_, cache._clock,
                          protected_size=cache.protected_size_, page_size=cache.page_size,
                          eviction_policy=cache.eviction_policy, kv_events=cache.enable_kv_events,
                          write_policy=cache.write_policy,
                          # distinct slots: a slot freed twice is in the free queue twice
                          host_used=host.size - len(set(host.free_slots.tolist())) if host.double_freed
                          else host.used_size(), host_size=host.size,
                          device_tokens=cache.evictable_size_ + cache.protected_size_,
                          writes_in_flight=len(writing), loads_in_flight=len(cache.ongoing_load_back),
                          head_bugs=cache.head_bugs, unreachable=_unreachable(cache) if cache.head_bugs else (),
                          double_freed=tuple(host.double_freed), reports=tuple(cache.head_bug_reports),
                          host_accounting=host.accounting(), host_leaves=len(cache.evictable_host_leaves))


def _unreachable(cache: HostTransfers) -> tuple:
    """Nodes the cache still refers to that the root cannot reach: its eviction candidates,
    its loads and writes in flight, and every deleted ancestor and child of one (only a head
    bug makes any: a node deleted above a child, or a load-back of a deleted node)."""
    held = [*cache.evictable_leaves, *cache.evictable_host_leaves,
            *cache.ongoing_load_back.values(), *cache.ongoing_write_through.values()]
    lost: dict = {}
    for node in held:
        if node.id in lost or cache._in_tree(node):
            continue
        top = node
        while top.parent is not None and not cache._in_tree(top.parent):
            top = top.parent   # the highest deleted ancestor: everything below it is lost
        stack = [top]
        while stack:
            n = stack.pop()
            lost[n.id] = (n.id, n.key, () if n.value is None else tuple(n.value.tolist()),
                          None if n.host_value is None else tuple(n.host_value.tolist()))
            stack.extend(n.children.values())
    return tuple(lost[i] for i in sorted(lost))
