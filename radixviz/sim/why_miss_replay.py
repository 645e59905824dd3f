"""The requests of a why-miss question, sent one at a time to an engine (why_miss.py reads it).

Each request is matched, given slots (evicting when the pool is full), inserted and unlocked,
as the loop does with a request that ran alone. With a host tier (``host_size``) the copies
to the host are waited for after each request, so a later eviction can demote what was
copied instead of dropping it; ``reach`` then tells the device part of B's match from the
part found on the host only.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import torch

from radixviz.cache import TokenToKVPool
from radixviz.cache.engines import engine_with, open_engine


@dataclass(frozen=True)
class Reach:
    """How far a prompt's match gets: on the device, and past it on the host only. An engine
    whose components each judge a match (the unified tree) says how far its Full KV alone
    reaches (``full``) and, for each component that cut it, ``(kind, tokens lost, why)``."""
    device: int
    host: int = 0
    full: int | None = None
    causes: tuple = ()


class HostTierVerbs(Protocol):
    """The host tier's own verbs this replay drives (engines/hicache/engine.py has them)."""
    def match_tiers(self, key: Sequence[int], extra_key: str | None = None) -> TieredMatch: ...

    def sync(self) -> int: ...


class TieredMatch(Protocol):
    @property
    def device_indices(self) -> torch.Tensor: ...

    @property
    def host_hit_length(self) -> int: ...


class Replay:
    def __init__(self, pool_size: int, page_size: int, eviction: str, host_size: int | None = None):
        self.pool = TokenToKVPool(pool_size, device="cpu")
        self.tiers = host_size is not None
        if self.tiers:
            self.engine = open_engine(engine_with("host_tier"), self.pool, page_size=page_size,
                                      eviction_policy=eviction, host_size=host_size)
        else:
            self.engine = open_engine(engine_with("pages", without="host_tier"), self.pool, page_size=page_size,
                                      eviction_policy=eviction)

    def key(self, prompt: tuple, limit: int) -> tuple:
        return prompt[:self.engine.whole_pages(limit)]

    def device_reach(self, prompt: tuple, limit: int, namespace) -> int:
        """Tokens of ``prompt`` (its first ``limit``) the device holds, touching nothing."""
        return self.engine.preview(self.key(prompt, limit), namespace).matched

    def reach(self, prompt: tuple, limit: int, namespace) -> Reach:
        """The device part and the host-only part of the match (this match splits and stamps)."""
        if not self.tiers:
            return Reach(self.device_reach(prompt, limit, namespace))
        found = cast(HostTierVerbs, self.engine).match_tiers(self.key(prompt, limit), namespace)
        return Reach(len(found.device_indices), found.host_hit_length)

    def take_slots(self, prompt: tuple, key: tuple, prefix: torch.Tensor) -> tuple[torch.Tensor, int]:
        """(the slots of ``key``: the matched ``prefix``'s, then new ones; the tokens evicted
        to make room for them). A request that cannot fit the pool is a ValueError."""
        need = len(key) - prefix.shape[0]
        slots, evicted = self.pool.alloc(need), 0
        if slots is None:
            evicted = self.engine.evict(need)
            slots = self.pool.alloc(need)
        if slots is None:
            raise ValueError(f"a request of {len(prompt)} tokens does not fit a pool of "
                             f"{self.pool.size} slots: give a larger --pool-size")
        return (torch.cat([prefix, slots]) if need else prefix), evicted

    def run(self, prompt: tuple, namespace) -> int:
        """Send one request; return the tokens evicted to make room for it."""
        engine, key = self.engine, prompt[:self.engine.whole_pages(len(prompt))]
        prefix, node = engine.match(key, namespace)
        engine.lock(node)
        self.pool.add_refs(prefix)
        values, evicted = self.take_slots(prompt, key, prefix)
        engine.insert(key, values, extra_key=namespace)
        engine.unlock(node)
        if self.tiers:
            cast(HostTierVerbs, engine).sync()   # the copies to the host land before the next request
        return evicted
