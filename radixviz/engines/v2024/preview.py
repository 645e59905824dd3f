"""What a match would return, read off a snapshot without touching the tree.

Views use it to say what the other matcher would have done (the #7 bug). It follows the
same walk as ``RadixCache._match_prefix_helper`` (cache.py) and stops by the same rule
(``keys.match_stops_here``); a test holds the two together.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

from radixviz.cache.keys import as_key, match, match_stops_here
from radixviz.cache.snapshot import MatchPreview, TreeSnapshot

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence


def preview_match(tree: TreeSnapshot, key: str | Sequence[Hashable], buggy: bool) -> MatchPreview:
    """What ``match_prefix(key)`` would return on ``tree`` with that matcher."""
    key = as_key(key)
    node, start = tree.root, 0
    slots: list = []
    path: list = []
    last = tree.root.id
    while start < len(key):
        child = node.child_for(key, start=start)
        if child is None:
            break
        common = match(child.key, key, start)
        slots.extend(child.value[:common])
        path.append((child.id, common))
        if match_stops_here(common, len(child.key), len(key) - start, buggy):
            return MatchPreview(len(slots), tuple(slots), tuple(path), (child.id, common), child.id)
        last, node, start = child.id, child, start + common
    return MatchPreview(len(slots), tuple(slots), tuple(path), None, last)


@dataclass(frozen=True)
class MatcherDisagreement:
    fixed: MatchPreview
    buggy: MatchPreview
    wrong_from: int         # first token position the buggy matcher gets wrong
    wrong_slots: tuple      # slots it returns that belong to another context


def compare_matchers(tree: TreeSnapshot, key: str | Sequence[Hashable]) -> MatcherDisagreement | None:
    """None when both matchers return the same slots for ``key``."""
    fixed, buggy = preview_match(tree, key, False), preview_match(tree, key, True)
    if fixed.slots == buggy.slots:
        return None
    wrong_from = next((i for i, (a, b) in enumerate(zip(fixed.slots, buggy.slots)) if a != b),
                      min(len(fixed.slots), len(buggy.slots)))
    return MatcherDisagreement(fixed, buggy, wrong_from, buggy.slots[wrong_from:])
