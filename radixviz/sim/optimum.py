"""The best hit rate any order could reach on a run's prompts (the SGLang paper's theorem).

Zheng et al. (NeurIPS 2024, §3) show that for a batch of requests, walking the radix tree
of their prompts depth first computes every distinct prefix exactly once, provided the
cache holds at least the longest request; nothing can do better, because every token of
that tree has to be computed at least once. So the optimum is::

    1 - (tokens of the prompts' radix tree) / (prompt tokens)

``PromptTree`` counts the tree's tokens as prompts arrive (one pass, memory: one 64-bit key
per distinct prefix unit, nothing per request). With pages, only whole pages are shared: the tree is
built of pages and every prompt's partial last page is computed each time.

Two honest corrections sit beside the theorem's number, never replacing it:

- ``last_token_bound``: a prompt already cached whole still computes its last token (the
  scheduler needs its logits), so exact duplicates each cost one token more;
- decode's tokens are free: a finished request's answer is in the cache when the chat's
  next turn quotes it, so the tree counts only prompt tokens no earlier answer produced;
- ``condition``: whether the pool holds the longest request that ran. Requests bigger
  than the pool are refused before they run, so they are left out of the prompts counted,
  and the report says how many.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .prefix_count import KeyTable, PrefixCounter

if TYPE_CHECKING:
    from collections.abc import Sequence


class PromptTree:
    """The prompts' radix tree, counted without being built: distinct tokens, prompts, requests.

    Only its size is needed, so each distinct whole-page prefix is one 64-bit key
    (``PrefixCounter``; its docstring gives the memory and the collision bound) and each
    prompt end one more (for the duplicates).
    """

    def __init__(self, page_size: int = 1):
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size}")
        self.page_size = page_size
        self.tree_tokens = 0       # whole pages held by the tree, in tokens
        self.tail_tokens = 0       # partial last pages: computed by every request
        self.prompt_tokens = 0
        self.requests = 0
        self.duplicates = 0        # requests whose whole-page key was already a prompt end
        self.longest = 0           # prompt + output of the longest request added
        self._prefixes = PrefixCounter(page_size)
        self._ends = KeyTable()    # keys of the whole-page prompts seen so far
        self._empty_end = False    # a prompt shorter than a page (key 0) was seen

    def add(self, tokens: Sequence[int], output_len: int = 0) -> int:
        """Count one request's prompt; returns how many tokens the tree grew by."""
        n, page = len(tokens), self.page_size
        whole = n - n % page
        self.requests += 1
        self.prompt_tokens += n
        self.tail_tokens += n - whole
        self.longest = max(self.longest, n + output_len)
        new, end = self._prefixes.add(tokens, whole)
        grown = new * page
        self.tree_tokens += grown
        seen = self._empty_end if end == 0 else end in self._ends
        # a duplicate with a partial last page computes that page anyway: no extra token
        if seen and not new and n == whole:
            self.duplicates += 1
        if end == 0:
            self._empty_end = True
        elif not seen:
            self._ends.add_new(np.array([end], dtype=np.uint64))
        return grown

    def add_decoded(self, tokens: Sequence[int]) -> None:
        """A finished request's sequence, whose answer decode computed: a later prompt that
        quotes it (a chat's next turn) finds those tokens already made, so they cost nothing."""
        whole = len(tokens) - len(tokens) % self.page_size
        self._prefixes.add(tokens, whole)

    def nbytes(self) -> int:
        """The counting tables' size: what the optimum holds in memory."""
        return self._prefixes.keys.nbytes() + self._ends.nbytes()

    def report(self, pool_size: int | None = None, refused: int = 0,
               hit_rate: float | None = None, timed: bool = False) -> dict:
        return optimum_report(self, pool_size, refused, hit_rate, timed)


def optimum_report(tree: PromptTree, pool_size: int | None, refused: int = 0,
                   hit_rate: float | None = None, timed: bool = False) -> dict:
    """The numbers a run reports beside its hit rate (JSON-ready); with ``hit_rate``, the
    run's share of the optimum too (None when the optimum is 0). ``timed``: the requests
    arrived over time, so no order could take them depth first: the optimum only bounds."""
    total = tree.prompt_tokens
    computed = tree.tree_tokens + tree.tail_tokens
    optimal = 1 - computed / total if total else 0.0
    bound = 1 - min(total, computed + tree.duplicates) / total if total else 0.0
    holds = pool_size is None or tree.longest <= pool_size
    if not tree.requests:
        note = "no request ran: nothing to compare"
    elif holds and timed:
        note = ("the requests arrived over time, and none can be served before it arrives: "
                "depth-first order is not open to any scheduler, so this bounds the hit rate "
                "and need not be reached")
    elif holds:
        note = (f"the pool ({pool_size:,} slots) holds the longest request ({tree.longest:,} tokens): "
                "one request at a time in depth-first order reaches this" if pool_size is not None else "")
    else:
        note = (f"the pool ({pool_size:,} slots) is smaller than the longest request "
                f"({tree.longest:,} tokens): the theorem's condition fails, this is only an upper bound")
    if refused:
        note += f"; {refused:,} refused request(s) (never fit) are not counted"
    share = share_of_optimal(hit_rate, optimal) if hit_rate is not None else None
    if share is not None and share > 1:
        note += ("; above 100 %: the run counts hits the theorem does not model (a retracted "
                 "request's second prefill, loads from a host tier)")
    return {"optimal_hit_rate": round(optimal, 6), "share_of_optimal": None if share is None
            else round(share, 6), "last_token_bound": round(bound, 6),
            "tree_tokens": tree.tree_tokens + tree.tail_tokens, "prompt_tokens": total,
            "requests": tree.requests, "duplicate_prompts": tree.duplicates,
            "page_size": tree.page_size, "longest_request": tree.longest,
            "condition_holds": holds, "note": note}


def share_of_optimal(hit_rate: float, optimal: float) -> float | None:
    """A policy's hit rate as a share of the optimum (None when the optimum is 0)."""
    return hit_rate / optimal if optimal > 0 else None
