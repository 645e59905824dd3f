"""The first release's radix cache (SGLang 22085081bb, January 2024), with the #7 switch.

``cache.py`` is the engine the code pane shows; ``node.py`` its node, ``cache_heap.py`` its eviction
order, ``invariants.py`` its checks, ``preview.py`` what a match would return. ``Engine`` puts
it behind the verbs every caller uses (radixviz/cache/facade.py).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import torch

from radixviz.cache.contract import Matched, matched
from radixviz.cache.facade import Engine as _Facade
from radixviz.cache.options import MATCHER, STRICT
from .cache import RadixCache
from .invariants import check_invariants
from .node import TreeNode
from .preview import compare_matchers, preview_match

if TYPE_CHECKING:
    from radixviz.cache.snapshot import MatchPreview

__all__ = ["Engine", "RadixCache", "TreeNode", "check_invariants", "compare_matchers", "preview_match"]


class Engine(_Facade[RadixCache, TreeNode]):
    """The 2024 engine: settings ``buggy`` (the pre-#7 matcher) and ``strict`` (False takes
    a value one slot short, as the release's scheduler gave it before #4)."""

    def make_cache(self) -> RadixCache:
        return RadixCache(buggy_match=self.settings.of(MATCHER), device=self.pool.device,
                          strict=self.settings.of(STRICT))

    def match_key(self, key: Sequence[int], extra_key: str | None) -> Matched:
        return matched(self.cache.match_prefix(key))

    def insert_key(self, key: Sequence[int], slots: torch.Tensor, priority: int | None,
                   extra_key: str | None = None) -> int:
        return self.cache.insert(key, slots)

    def evict_backbone(self, num_tokens: int, release: Callable[[torch.Tensor], int]) -> None:
        self.cache.evict(num_tokens, release)

    def lock(self, node: TreeNode) -> int:
        return self.cache.inc_ref_counter(node)

    def unlock(self, node: TreeNode) -> int:
        return self.cache.dec_ref_counter(node)

    def check_invariants(self, held: Sequence[torch.Tensor | Sequence[int]] = ()) -> None:
        check_invariants(self.cache, self.pool, held)

    def preview(self, key: Sequence[int], extra_key: str | None = None) -> MatchPreview:
        return preview_match(self.cache.snapshot(), key, self.cache.buggy_match)

    def reported_settings(self) -> dict[str, object]:
        return {}  # a simulation reports its own insert line (#4) and never flips the matcher

    def wrap_key_match(self, wrapper: Callable[[Callable[..., int]], Callable[..., int]]) -> None:
        self.cache.key_match = wrapper(self.cache.key_match)

    def change(self, option: str, value: object) -> None:
        """The #7 matcher and the #4 strictness switch on the live tree."""
        if option not in (MATCHER.name, STRICT.name):
            super().change(option, value)
        self.settings = self.settings.replace(**{option: value})
        self.cache.buggy_match, self.cache.strict = self.settings.of(MATCHER), self.settings.of(STRICT)
