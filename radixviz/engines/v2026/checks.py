"""What a lesson may predict of today's trees beyond the shared counts (lessons/lesson/checker.py
``tree_counts``): the namespaces under the root. Loaded by its registry line (EngineSpec.checks)
when a lesson is first checked, its session (and torch) already loaded."""
from __future__ import annotations

from radixviz.lessons.lesson.checker import tree_counts

from .snapshot import ModernTreeSnapshot


@tree_counts.register(ModernTreeSnapshot)   # named: a local type is not seen in annotations
def _(tree, pool=None) -> dict:
    return {**tree_counts.dispatch(object)(tree, pool),
            "namespaces": len({child.extra_key for child in tree.root.children})}
