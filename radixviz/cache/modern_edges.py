"""The one comparison the 2026 engine repeats most, remembered: does a key hold a whole edge?

A scheduler in the first release's shape matches every waiting request against the tree
every round, so the same prompt (an immutable tuple) is compared with the same long edge
(say a shared system prompt) at the same depth round after round. The answer cannot change
while both tuples are the same objects and the edge sits at the same depth, so a node
remembers the keys that held its whole edge; only ``_split_node`` gives a node another
edge and depth, and it forgets them there. The walk itself (and every access time it
sets) is unchanged: only the token-by-token comparison is skipped.

Keys are remembered by identity and kept alive by the memo, so an id is never reused
while it is in there; the memo is bounded and starts afresh when full.
"""
from __future__ import annotations

REMEMBER_FROM = 32        # shorter edges compare faster than a lookup costs
REMEMBER_AT_MOST = 16384  # keys per node, then the node starts a fresh memo


def holds_edge(node, key: tuple, start: int) -> bool:
    """Does ``key[start:]`` begin with ``node``'s whole edge? (``key`` is long enough.)"""
    seen = node.seen_keys
    if seen is not None and seen.get(id(key)) is key:
        return True
    edge = node.key
    if key[start:start + len(edge)] != edge:
        return False
    if len(edge) >= REMEMBER_FROM:
        if seen is None or len(seen) >= REMEMBER_AT_MOST:
            node.seen_keys = seen = {}
        seen[id(key)] = key
    return True
