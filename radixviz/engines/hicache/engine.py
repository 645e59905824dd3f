"""The hierarchical cache (SGLang's ``hiradix_cache.py``, 9fbe6800a): a device and a host tier.

``cache.py`` holds the tree and ``cache_transfers.py`` the moves between tiers, in the shape of
SGLang's file; ``node.py`` its node, ``cache_host_pool.py`` the host memory, ``cache_controller.py`` the
copies and their acknowledgements, ``invariants.py``, ``preview.py`` and ``snapshot.py`` as
for every engine. ``Engine`` puts it behind the facade's verbs and adds the host tier's own:
``match_tiers``, ``load_back``, ``start_loads``, ``check_events``, ``sync``, ``evict_host``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

from radixviz.cache.contract import Component, FreedSlots, Matched, SlotPool
from radixviz.cache.options import EVICTION, HEAD_BUGS, HOST_SIZE, KV_EVENTS, PAGE, WRITE_POLICY
from radixviz.engines.v2026.engine import TodaysEngine
from .cache import HiRadixCache, MatchResult
from .cache_host_pool import TokenToKVPoolHost, default_host_size
from .invariants import check_hicache_invariants
from .node import TreeNode
from .preview import preview_match
from .snapshot import DEVICE_TIER, HOST_TIER

if TYPE_CHECKING:
    from radixviz.cache.pool import TokenToKVPool
    from radixviz.cache.snapshot import MatchPreview

__all__ = ["Engine", "HiRadixCache", "MatchResult", "TokenToKVPoolHost", "TreeNode",
           "check_hicache_invariants", "default_host_size", "preview_match"]


class Engine(TodaysEngine[HiRadixCache]):
    """The host-tier engine: the 2026 engine's settings and verbs (lock, unlock, insert,
    protected size, the edge comparison), plus ``host_size`` (None: SGLang's default, twice
    the device pool) and ``write_policy``; what differs is the cache, its checks and the
    two-tier match and eviction; ``head_bugs`` brings back SGLang's 9fbe6800a write_back bugs
    (cache_head_bugs.py; () by default)."""

    memory = (DEVICE_TIER, HOST_TIER)

    def make_cache(self) -> HiRadixCache:
        s = self.settings
        return HiRadixCache(self.pool, s.of(PAGE), s.of(EVICTION), s.of(HOST_SIZE), s.of(WRITE_POLICY),
                            enable_kv_events=s.of(KV_EVENTS), head_bugs=s.of(HEAD_BUGS))

    def extra_pools(self) -> tuple[SlotPool, ...]:
        return (self.host_pool,)

    def evict_component(self, component: Component, num_tokens: int, freed: FreedSlots | None) -> int:
        """The host tier's own eviction (``evict N host``, as ``evict-host N``): host-only
        leaves leave the tree; returns the host tokens freed."""
        return self.cache.evict_host(num_tokens)

    def check_invariants(self, held: Sequence[torch.Tensor | Sequence[int]] = ()) -> None:
        check_hicache_invariants(self.cache, self.pool, held)

    def preview(self, key: Sequence[int], extra_key: str | None = None) -> MatchPreview:
        return preview_match(self.cache.snapshot(), key, extra_key)

    def reported_settings(self) -> dict[str, object]:
        return {**self.settings, "host_size": self.cache.token_to_kv_pool_host.size}

    def change(self, option: str, value: object) -> None:
        if option == HEAD_BUGS.name:   # a switch, as the 2024 engine's matcher: the tree stays
            self.settings = self.settings.replace(head_bugs=value)
            self.cache.set_head_bugs(self.settings.of(HEAD_BUGS))
            return
        if option != WRITE_POLICY.name:
            super().change(option, value)   # the eviction policy, as the 2026 engine
            return
        if self.cache.in_flight():
            raise ValueError("copies are in flight: sync before changing the write policy")
        self.settings = self.settings.replace(write_policy=value)
        self.cache.set_write_policy(self.settings.of(WRITE_POLICY))

    # --------------------------------------------------------- the shared verbs

    def match(self, key: Sequence[int], extra_key: str | None = None) -> Matched:
        return self.match_key(key, extra_key)   # not today's shortcut: this cache's match has two tiers

    def match_key(self, key: Sequence[int], extra_key: str | None) -> Matched:
        """``(device slots, last device node)``: the part of the match already on the device."""
        result = self.cache.match_prefix(key, extra_key)
        return Matched(result.device_indices, result.last_device_node)

    def evict(self, num_tokens: int, freed: FreedSlots | None = None, component: str | None = None) -> int:
        """Evict device copies until ``num_tokens`` tokens are off the device; the cache frees
        the slots itself (its controller owns the device allocator, as in SGLang), telling
        ``freed(slots)`` of each stretch. Returns how many slots became free. ``component``
        ``host``: the host tier's own eviction."""
        if component is not None and component != DEVICE_TIER.name:
            return super().evict(num_tokens, freed, component)
        before = self.pool.available_size()
        self.cache.evict(num_tokens, freed)
        return self.pool.available_size() - before

    def reset(self, pool: TokenToKVPool | None = None) -> None:
        """Empty both tiers (a new pool: a new cache on it, the observer kept)."""
        if pool is None:
            self.cache.reset()
            return
        observer = self.cache.observer
        self.pool = pool
        self.cache = self.make_cache()
        self.cache.observer = observer

    # ------------------------------------------------------ the host tier's verbs

    @property
    def host_pool(self) -> TokenToKVPoolHost:
        return self.cache.token_to_kv_pool_host

    def match_tiers(self, key: Sequence[int], extra_key: str | None = None) -> MatchResult:
        """The whole two-tier match: device slots and node, last host node, host hit length."""
        return self.cache.match_prefix(key, extra_key)

    def load_back(self, last_host_node: TreeNode, mem_quota: int | None = None) -> tuple[torch.Tensor, TreeNode]:
        """``(device slots loaded, node to lock)`` for a host hit ending at ``last_host_node``:
        nothing and the deepest device node when the stretch is below the threshold or finds
        no room. The copy starts with ``start_loads``."""
        return self.cache.init_load_back(last_host_node, mem_quota)

    def start_loads(self) -> int:
        """Start every queued load's copy; return the tokens copied."""
        return self.cache.ready_to_load_host_cache()

    def check_events(self) -> None:
        """Acknowledge the copies that have finished (the scheduler's check each round)."""
        self.cache.check_hicache_events()

    def sync(self) -> int:
        """Wait for every copy in flight and acknowledge them all; return how many nodes."""
        return self.cache.sync()

    def evict_host(self, num_tokens: int) -> int:
        return self.cache.evict_host(num_tokens)

    def in_flight(self) -> int:
        return self.cache.in_flight()
