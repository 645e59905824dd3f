"""What the two-tier match would return, read off a snapshot without touching the tree.

The same walk as ``HiRadixCache._match_prefix_helper``: whole pages, one child per first
page, edges compared in whole pages; device slots are taken only from nodes on the device,
and the tokens matched past them, on the host only, are the host hit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

from radixviz.cache.keys import as_key, key_match_paged
from radixviz.cache.snapshot import MatchPreview

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence
    from .snapshot import HiTreeSnapshot


@dataclass(frozen=True)
class HiMatchPreview(MatchPreview):
    host_hit_length: int = 0     # matched tokens on the host only, after the device prefix
    last_host_node: int = 0      # id of the deepest matched node with a host copy


def preview_match(tree: HiTreeSnapshot, key: str | Sequence[Hashable], extra_key: Hashable | None = None) -> HiMatchPreview:
    """What ``match_prefix(key, extra_key)`` would return on ``tree`` (a HiTreeSnapshot)."""
    page = tree.page_size
    key = as_key(key)
    key = key[:len(key) // page * page]
    node, start = tree.root, 0
    slots: list = []
    path: list = []
    last_device = last_host = tree.root.id
    host_hit, split = 0, None
    while start < len(key):
        child = node.child_for(key, page, start, extra_key)
        if child is None:
            break
        common = key_match_paged(child.key, key[start:], page)
        if child.evicted:
            host_hit += common
        else:
            slots.extend(child.value[:common])
            path.append((child.id, common))
            last_device = child.id
        if child.host_value is not None:
            last_host = child.id
        if common < len(child.key):
            split = (child.id, common)
            break
        node, start = child, start + common
    return HiMatchPreview(len(slots), tuple(slots), tuple(path), split, last_device, host_hit, last_host)
