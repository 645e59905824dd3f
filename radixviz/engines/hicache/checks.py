"""What a lesson may predict of the host tier's trees (lessons/lesson/checker.py ``tree_counts``):
today's counts, and the host slots in use, the copies not yet acknowledged, the host-only nodes,
the host slots freed twice, the host-eviction candidates and the stray host slots. Loaded by its
registry line (EngineSpec.checks)."""
from __future__ import annotations

from radixviz.engines.v2026.snapshot import ModernTreeSnapshot
from radixviz.lessons.lesson.checker import tree_counts

from .ops_pool import host_size, host_state
from .snapshot import HiTreeSnapshot


@tree_counts.register(HiTreeSnapshot)
def _(tree, pool=None) -> dict:
    stray = 0 if pool is None else sum(1 for slot in range(host_size(pool)) if host_state(pool, slot) == "stray")
    return {**tree_counts.dispatch(ModernTreeSnapshot)(tree, pool), "host_used": tree.host_used,
            "in_flight": tree.writes_in_flight + tree.loads_in_flight,
            "host_only_nodes": sum(1 for n in tree.root.walk() if n.evicted),
            "double_freed": len(set(tree.double_freed)),   # host slots freed twice (head bugs)
            "host_leaves": tree.host_leaves, "stray_host_slots": stray}
