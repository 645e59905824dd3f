"""Argument checks of the 2026 engine, done before anything changes."""
from __future__ import annotations


def check_attached(cache, node, releasing: bool = False) -> None:
    """Refuse a node not in ``cache``'s tree, or (``releasing``) an unlock below zero."""
    current = node
    while current is not cache.root_node:
        parent = current.parent
        if parent is None or not current.key \
                or parent.children.get(cache._child_key(current.key, 0)) is not current:
            raise ValueError(f"node #{node.id} is not in this tree (evicted, or from another cache)")
        if releasing and current.lock_ref <= 0:
            raise ValueError(f"node #{current.id} holds no lock to release")
        current = parent
