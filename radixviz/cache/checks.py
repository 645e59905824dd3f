"""Argument checks both engines make before a lock is released: nothing changes on a refusal."""
from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING

from .keys import get_child_key

# how each engine's nodes count their locks, for ``lock_of``: read in C, not by a Python call
REF_COUNTER = attrgetter("ref_counter")   # 2024
LOCK_REF = attrgetter("lock_ref")         # 2026, host tier

if TYPE_CHECKING:
    from typing import Any


def check_release(cache: Any, node: Any, lock_of: Callable, releasing: bool = False, page_size: int = 1,
                  namespaced: bool = False) -> None:
    """Refuse a node that is not in ``cache``'s tree (evicted, or another cache's) and, when
    ``releasing``, a release of a lock nobody took at ``node``.

    Every lock runs from the node a request locked up to the root, so a node holds at least
    the locks of its children together; the ones left over end at the node itself. Only
    those can be released there: releasing one of a child's (say, at the parent of a locked
    leaf) would leave the child holding more locks than its parent, overstate the evictable
    size, and refuse the child's own release later. ``lock_of(node)`` reads a node's count
    (``ref_counter`` in 2024, ``lock_ref`` in 2026: ``REF_COUNTER``, ``LOCK_REF``). ``namespaced``: the nodes carry an
    ``extra_key`` their parents file them under (2026).
    """
    current, root = node, cache.root_node
    if node is root:
        return  # locking or releasing the root changes nothing: its one lock is permanent
    while current is not root:
        parent, key = current.parent, current.key
        extra_key = current.extra_key if namespaced else None
        if parent is None or not key or \
                parent.children.get(get_child_key(key, page_size, 0, extra_key)) is not current:
            raise ValueError(f"node #{node.id} is not in this tree (evicted, or from another cache)")
        current = parent
    if releasing:
        held = lock_of(node)
        # map, not a generator: every lock and unlock of a run asks this (docs/benchmarks.md)
        below = sum(map(lock_of, node.children.values()))
        if held <= below:
            whose = f": its {held} lock(s) belong to the nodes below it" if held else ""
            raise ValueError(f"node #{node.id} holds no lock of its own to release{whose}")
