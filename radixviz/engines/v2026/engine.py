"""Today's radix cache (SGLang 9fbe6800a, March 2026): pages, eviction policies, lock_ref,
namespaces (extra keys), page hashes and KV events.

``cache.py`` is the engine the code pane shows, in the shape of SGLang's ``radix_cache.py``;
``node.py`` its node, ``cache_candidates.py`` the eviction order, ``invariants.py`` its checks,
``preview.py`` what a match would return, ``snapshot.py`` its pictures. ``Engine`` puts it
behind the verbs every caller uses (radixviz/cache/facade.py).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import torch

from radixviz.cache.contract import Matched, matched
from radixviz.cache.facade import Engine as _Facade
from radixviz.cache.options import EVICTION, KV_EVENTS, PAGE
from .cache import RadixCache
from .invariants import check_modern_invariants
from .node import TreeNode
from .preview import preview_match

if TYPE_CHECKING:
    from radixviz.cache.kv_events import KVEvent
    from radixviz.cache.snapshot import MatchPreview

_new_tuple = tuple.__new__
CacheT = TypeVar("CacheT", bound=RadixCache)   # today's cache, or one built on it (the host tier's)

__all__ = ["Engine", "RadixCache", "TreeNode", "check_modern_invariants", "preview_match"]


class TodaysEngine(_Facade[CacheT, TreeNode]):
    """The verbs today's cache and the host tier's share: locks, an insert with a priority
    and a namespace, the protected size, the KV events, the edge comparison, the policy."""

    def match_key(self, key: Sequence[int], extra_key: str | None) -> Matched:
        return matched(self.cache.match_prefix(key, extra_key))

    def match(self, key: Sequence[int], extra_key: str | None = None) -> Matched:
        # the facade's, two calls shorter (contract.matched inlined): the simulation's most
        # frequent call, on an engine that has namespaces (no refusal to check)
        return _new_tuple(Matched, self.cache.match_prefix(key, extra_key))

    def evict_backbone(self, num_tokens: int, release: Callable[[torch.Tensor], int]) -> None:
        self.cache.evict(num_tokens, release)

    def lock(self, node: TreeNode) -> int:
        return self.cache.inc_lock_ref(node)

    def unlock(self, node: TreeNode) -> int:
        return self.cache.dec_lock_ref(node)

    def insert_key(self, key: Sequence[int], slots: torch.Tensor, priority: int | None,
                   extra_key: str | None = None) -> int:
        return self.cache.insert(key, slots, priority or 0, extra_key)

    def check_invariants(self, held: Sequence[torch.Tensor | Sequence[int]] = ()) -> None:
        check_modern_invariants(self.cache, self.pool, held)

    def preview(self, key: Sequence[int], extra_key: str | None = None) -> MatchPreview:
        return preview_match(self.cache.snapshot(), key, extra_key)

    def protected_size(self) -> int:
        return self.cache.protected_size()

    def take_events(self) -> list[KVEvent]:
        return self.cache.take_events()   # empty with KV events off (the option kv_events)

    def wrap_key_match(self, wrapper: Callable[[Callable[..., int]], Callable[..., int]]) -> None:
        self.cache.key_match_fn = wrapper(self.cache.key_match_fn)

    def change(self, option: str, value: object) -> None:
        if option != EVICTION.name:
            super().change(option, value)
        self.settings = self.settings.replace(eviction_policy=value)
        self.cache.set_eviction_policy(self.settings.of(EVICTION))


class Engine(TodaysEngine[RadixCache]):
    """The 2026 engine: settings ``page_size``, ``eviction_policy`` and ``kv_events``."""

    def make_cache(self) -> RadixCache:
        return RadixCache(self.settings.of(PAGE), self.settings.of(EVICTION), device=self.pool.device,
                          enable_kv_events=self.settings.of(KV_EVENTS))
