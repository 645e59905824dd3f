"""What today's match would return, read off a snapshot without touching the tree.

The same walk as ``RadixCache._match_prefix_helper`` (cache.py): the key is cut to whole
pages, children are found by ``get_child_key`` (in the key's namespace), edges are compared in whole pages, and a
match that stops inside an edge would split it there. The KV check plans its prefill with
it before the insert runs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.keys import as_key, key_match_paged
from radixviz.cache.snapshot import MatchPreview
from .snapshot import ModernTreeSnapshot

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence


def preview_match(tree: ModernTreeSnapshot, key: str | Sequence[Hashable], extra_key: Hashable | None = None) -> MatchPreview:
    """What ``match_prefix(key, extra_key)`` would return on ``tree``."""
    page = tree.page_size
    key = as_key(key)
    key = key[:len(key) // page * page]
    node, start = tree.root, 0
    slots: list = []
    path: list = []
    last = tree.root.id
    while start < len(key):
        child = node.child_for(key, page, start, extra_key)
        if child is None:
            break
        common = key_match_paged(child.key, key[start:], page)
        slots.extend(child.value[:common])
        path.append((child.id, common))
        if common < len(child.key):
            return MatchPreview(len(slots), tuple(slots), tuple(path), (child.id, common), child.id)
        last, node, start = child.id, child, start + common
    return MatchPreview(len(slots), tuple(slots), tuple(path), None, last)
