"""The host pool in a step's picture, as the host tier's views, quizzes and checks read it.

A session pictures every declared pool each step (script/frames.py ``PoolSnapshot``): the
device pool first, then the host pool (``more[0]``: per slot 0 free, 1 in use, 2 in the free
queue twice). Which node holds a host slot comes from the nodes' host parts (contract.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from radixviz.script.frames import PoolSnapshot

HOST = 1   # the host pool's place among a step's pools (the device pool is 0)


def host_size(pool: PoolSnapshot) -> int:
    return len(pool.more[0]) if pool.more else 0


def host_used(pool: PoolSnapshot) -> int:
    return pool.more[0].count(1) if pool.more else 0


def host_owners(pool: PoolSnapshot) -> tuple:
    """Per host slot: the node snapshot holding it there, or None."""
    return pool.holders(HOST) if pool.more else ()


def host_state(pool: PoolSnapshot, slot: int) -> str:
    """free; host (its node has no device copy); both (the node is on both tiers);
    writing (a copy to it is in flight); or stray (taken, but no node holds it). Only the
    9fbe6800a bugs (cache_head_bugs.py) make the last three: twice (in the free queue twice),
    held (free, yet a node in the tree holds it), and stray."""
    counts = pool.more[0]
    if counts[slot] == 2:
        return "twice"
    node = host_owners(pool)[slot]
    if not counts[slot]:
        return "held" if node is not None else "free"
    if node is None:
        return "stray"
    if node.in_flight == "write":
        return "writing"
    return "host" if node.evicted else "both"
