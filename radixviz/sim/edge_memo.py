"""The comparison the simulation repeats most, remembered: how much of an edge does a key hold?

The first release's scheduler matches every waiting request against the tree every round,
so the same prompt (an immutable tuple) is compared with the same long edge (say a shared
system prompt) round after round. Both are immutable and the answer depends on nothing
else (and, for the 2024 engine, on where in the key the edge starts), so it is remembered by
the identity of the two tuples. The engine asks it through its edge comparison (the 2026
engine's ``key_match_fn``, as SGLang's cache has it; the 2024 engine's ``key_match``), which
the scheduler wraps at start-up; the walk, and every access time it sets, is unchanged. It
lives here, not in the engines the code pane teaches, because only a loop that matches the
same objects again gains from it.

Both tuples are kept alive by the memo, so an id is never reused while it is in there; the
memo is bounded and starts afresh when full.
"""
from __future__ import annotations

from typing import Callable

REMEMBER_FROM = 32        # shorter edges compare faster than a lookup costs
REMEMBER_AT_MOST = 65536  # answers kept, then the memo starts afresh


def remembering(key_match: Callable) -> Callable:
    """``key_match(edge, key[, start])`` that answers again from memory for the same two
    tuples (and the same ``start``, the 2024 engine's offset into the key)."""
    seen: dict = {}

    def key_match_remembered(edge, key, *start) -> int:
        if len(edge) < REMEMBER_FROM:
            return key_match(edge, key, *start)
        pair = (id(edge), id(key), *start)
        known = seen.get(pair)
        if known is not None and known[0] is edge and known[1] is key:
            return known[2]
        common = key_match(edge, key, *start)
        if len(seen) >= REMEMBER_AT_MOST:
            seen.clear()
        seen[pair] = (edge, key, common)
        return common
    return key_match_remembered
