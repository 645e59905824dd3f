"""Argument checks of the 2026 engine, done before anything changes."""
from __future__ import annotations


def check_attached(cache, node, releasing: bool = False) -> None:
    """Refuse a node not in ``cache``'s tree, or (``releasing``) an unlock below zero."""
    current, root, page = node, cache.root_node, cache.page_size
    while current is not root:
        parent, key = current.parent, current.key
        if parent is None or not key \
                or parent.children.get(key[0] if page == 1 else key[:page]) is not current:
            raise ValueError(f"node #{node.id} is not in this tree (evicted, or from another cache)")
        if releasing and current.lock_ref <= 0:
            raise ValueError(f"node #{current.id} holds no lock to release")
        current = parent
