"""The hierarchical cache (SGLang's ``hiradix_cache.py``, 9fbe6800a): a device and a host tier.

``cache.py`` holds the tree and ``cache_transfers.py`` the moves between tiers, in the shape of
SGLang's file; ``node.py`` its node, ``cache_host_pool.py`` the host memory, ``cache_controller.py`` the
copies and their acknowledgements, ``invariants.py``, ``preview.py`` and ``snapshot.py`` as
for every engine. ``Engine`` puts it behind the facade's verbs and adds the host tier's own:
``match_tiers``, ``load_back``, ``start_loads``, ``check_events``, ``sync``, ``evict_host``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from radixviz.engines.v2026.engine import Engine as _TodaysEngine
from .cache import HiRadixCache, MatchResult
from .cache_host_pool import TokenToKVPoolHost, default_host_size
from .invariants import check_hicache_invariants
from .node import TreeNode
from .preview import preview_match

if TYPE_CHECKING:
    from radixviz.cache.pool import TokenToKVPool
    from radixviz.cache.snapshot import MatchPreview

__all__ = ["Engine", "HiRadixCache", "MatchResult", "TokenToKVPoolHost", "TreeNode",
           "check_hicache_invariants", "default_host_size", "preview_match"]


class Engine(_TodaysEngine):
    """The host-tier engine: the 2026 engine's settings and verbs (lock, unlock, insert,
    protected size, the edge comparison), plus ``host_size`` (None: SGLang's default, twice
    the device pool) and ``write_policy``; what differs is the cache, its checks and the
    two-tier match and eviction; ``head_bugs`` brings back SGLang's 9fbe6800a write_back bugs
    (cache_head_bugs.py; () by default)."""

    def make_cache(self) -> HiRadixCache:
        s = self.settings
        return HiRadixCache(self.pool, s["page_size"], s["eviction_policy"], s.get("host_size"),
                            s["write_policy"], enable_kv_events=s.get("kv_events", False),
                            head_bugs=s.get("head_bugs", ()))

    def check_invariants(self, held: Sequence[torch.Tensor | Sequence[int]] = ()) -> None:
        check_hicache_invariants(self.cache, self.pool, held)

    def preview(self, key: Sequence[int], extra_key: str | None = None) -> MatchPreview:
        return preview_match(self.cache.snapshot(), key, extra_key)

    def reported_settings(self) -> dict:
        return {**self.settings, "host_size": self.cache.token_to_kv_pool_host.size}

    def change(self, option: str, value: Any) -> None:
        if option == "head_bugs":   # a switch, as the 2024 engine's matcher: the tree stays
            self.cache.set_head_bugs(value)
            self.settings["head_bugs"] = self.cache.head_bugs
            return
        if option != "write_policy":
            super().change(option, value)   # the eviction policy, as the 2026 engine
            return
        if self.cache.in_flight():
            raise ValueError("copies are in flight: sync before changing the write policy")
        self.cache.set_write_policy(value)
        self.settings[option] = self.cache.write_policy

    # --------------------------------------------------------- the shared verbs

    def match(self, key: Sequence[int], extra_key: str | None = None) -> tuple[torch.Tensor, TreeNode]:
        """``(device slots, last device node)``: the part of the match already on the device."""
        result = self.cache.match_prefix(key, extra_key)
        return result.device_indices, result.last_device_node

    def evict(self, num_tokens: int, freed: Callable[[torch.Tensor], None] | None = None) -> int:
        """Evict device copies until ``num_tokens`` tokens are off the device; the cache frees
        the slots itself (its controller owns the device allocator, as in SGLang), telling
        ``freed(slots)`` of each stretch. Returns how many slots became free."""
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
