"""What a match of the unified tree would return, read off a snapshot (no split, no access
time): the walk of cache_tree.py's ``_match_prefix_helper``, each node judged by the
components' rules (cache_verdicts.py)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from ...cache.keys import match
from ...cache.snapshot import MatchPreview
from .cache_verdicts import Step, Verdict, judge, reach
from .node import ComponentType
from .snapshot import UnifiedNodeSnapshot, UnifiedTreeSnapshot

SWA, MAMBA = ComponentType.SWA, ComponentType.MAMBA


def walk(tree: UnifiedTreeSnapshot, key: Sequence[int]) -> tuple[list[Step], list[int], tuple | None]:
    """The match's walk of ``key`` (cut to whole pages): its steps, the Full slots it passes
    and where it would cut an edge ((node id, tokens kept) or None)."""
    page = tree.page_size
    key = tuple(key)[:len(key) // page * page]
    node, at = tree.root, 0
    steps: list[Step] = []
    slots: list[int] = []
    while at < len(key):
        child = cast("UnifiedNodeSnapshot | None", node.child_for(key, page, at))
        if child is None:
            break
        common = match(child.key, key, at)
        common -= common % page
        if common == 0:
            break
        swa, state = child.part(SWA), child.part(MAMBA)
        steps.append(Step(child.id, common, None if swa is None else swa.value is not None,
                          # a cut edge's upper half keeps no state
                          None if state is None else state.value is not None and common == len(child.key)))
        slots.extend(child.value[:common])
        if common < len(child.key):
            return steps, slots, (child.id, common)
        node, at = child, at + common
    return steps, slots, None


def verdicts(tree: UnifiedTreeSnapshot, key: Sequence[int]) -> list[Verdict]:
    """Each component's verdict on every node the match of ``key`` walks."""
    return judge(walk(tree, key)[0], tree.sliding_window_size)


def preview_match(tree: UnifiedTreeSnapshot, key: Sequence[int]) -> MatchPreview:
    """The match of ``key`` now: ``matched`` tokens up to the deepest node every component
    accepts; ``path`` the nodes whose slots it returns; ``split`` where the walk would cut an
    edge; ``last_node`` the node it would return (the edge's id where that node is the cut's
    upper half, not made yet)."""
    steps, slots, split = walk(tree, key)
    judged = judge(steps, tree.sliding_window_size)
    matched = reach(judged)
    path = tuple((s.node, s.tokens) for s, v in zip(steps, judged) if v.end <= matched)
    return MatchPreview(matched, tuple(slots[:matched]), path, split, path[-1][0] if path else tree.root.id)
