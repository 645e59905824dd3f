"""Today's radix cache (SGLang 9fbe6800a, March 2026): pages, eviction policies, lock_ref,
namespaces (extra keys), page hashes and KV events.

``cache.py`` is the engine the code pane shows, in the shape of SGLang's ``radix_cache.py``;
``node.py`` its node, ``cache_candidates.py`` the eviction order, ``invariants.py`` its checks,
``preview.py`` what a match would return, ``snapshot.py`` its pictures. ``Engine`` puts it
behind the verbs every caller uses (radixviz/cache/facade.py).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from radixviz.cache.facade import Engine as _Facade
from .cache import RadixCache
from .invariants import check_modern_invariants
from .node import TreeNode
from .preview import preview_match

if TYPE_CHECKING:
    from radixviz.cache.snapshot import MatchPreview

__all__ = ["Engine", "RadixCache", "TreeNode", "check_modern_invariants", "preview_match"]


class Engine(_Facade):
    """The 2026 engine: settings ``page_size``, ``eviction_policy`` and ``kv_events``."""

    def make_cache(self) -> RadixCache:
        return RadixCache(self.settings["page_size"], self.settings["eviction_policy"],
                          device=self.pool.device,
                          enable_kv_events=self.settings.get("kv_events", False))

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

    def take_events(self) -> list[Any]:
        return self.cache.take_events()   # empty with KV events off (the option kv_events)

    def wrap_key_match(self, wrapper: Callable[[Callable], Callable]) -> None:
        self.cache.key_match_fn = wrapper(self.cache.key_match_fn)

    def change(self, option: str, value: Any) -> None:
        if option != "eviction_policy":
            super().change(option, value)
        self.cache.set_eviction_policy(value)
        self.settings["eviction_policy"] = self.cache.eviction_policy
