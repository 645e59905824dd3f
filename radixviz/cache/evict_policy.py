"""Eviction policies of today's radix cache: which unlocked leaf goes first.

Since #10190 and #11506 SGLang lets the operator pick how leaves are ordered for eviction;
#18843 added SLRU. Each policy is nothing more than a sort key on a node: eviction pops the
leaf with the smallest key first. Here they are a table of key functions, one line each.

Under radixviz's logical clock no two leaves can share an access time (the nodes that got
one operation's time form a single root-to-node chain, and every node built takes fresh
ticks) and no two nodes share a creation time, so every policy below orders the leaves
strictly: the eviction order never depends on how a set or heap happens to break a tie.
"""
from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

# SLRU: a node hit this many times (by inserts) moves to the protected segment
PROTECTED_HITS = 2

# an attrgetter reads its fields in C (a tuple for two): the eviction heap asks for a key each
# time a leaf is touched, so the common policies pay no Python call for it
EVICTION_KEYS: dict[str, Callable] = {
    "lru": attrgetter("last_access_time"),
    "lfu": attrgetter("hit_count", "last_access_time"),
    "fifo": attrgetter("creation_time"),
    "mru": lambda node: -node.last_access_time,
    "filo": lambda node: -node.creation_time,
    "priority": attrgetter("priority", "last_access_time"),
    "slru": lambda node: (int(node.hit_count >= PROTECTED_HITS), node.last_access_time),
}

POLICY_NAMES = tuple(EVICTION_KEYS)

# what each key means, for views and lessons (smallest key leaves first)
POLICY_SUMMARY = {
    "lru": "least recently used first (oldest access time)",
    "lfu": "fewest insert hits first, then least recently used",
    "fifo": "oldest node first (creation time)",
    "mru": "most recently used first (newest access time)",
    "filo": "newest node first (creation time)",
    "priority": "lowest priority first, then least recently used",
    "slru": f"probation (hits < {PROTECTED_HITS}) before protected, least recently used within each",
}


def eviction_key(policy: str) -> Callable:
    """The key function for ``policy`` (case-insensitive); ValueError names the choices."""
    name = str(policy).lower()
    try:
        return EVICTION_KEYS[name]
    except KeyError:
        raise ValueError(f"unknown eviction policy {policy!r}: choose one of "
                         f"{', '.join(POLICY_NAMES)}") from None
