"""The unified engine traced: the same run as untraced, a true snapshot with every event, every
step label marked in the file that emitted it, and the unified tree's own steps reported
(validators' verdicts, tombstones, cascades, restored windows, kept states, copies)."""
from __future__ import annotations

import pytest

from radixviz.engines.unified.cache_kinds import UnifiedKind
from radixviz.engines.unified.snapshot import UnifiedTreeSnapshot
from radixviz.render.source_map import markers, source_file
from test_unified_differential import Pair, clear_snapshots as clear


@pytest.mark.parametrize("mix, page", [("full+swa+mamba", 1), ("full+swa", 2), ("full+mamba", 4)])
def test_traced_run_agrees_with_the_reference_and_every_snapshot_is_true(mix, page):
    pair = Pair(mix, page, 0, seed=5)
    events = []

    def observe(event):
        events.append(event)
        assert isinstance(event.tree, UnifiedTreeSnapshot)
        if len(events) % 7 == 0:   # a fresh walk must give the same picture as the cached one
            cached = event.tree.root
            clear(pair.engine.root_node)
            assert pair.engine.snapshot().root == cached, f"stale snapshot at {event.step}"

    pair.engine.observer = observe
    for _ in range(80):
        pair.step()
        pair.compare()
    assert len(events) > 100


def test_every_emitted_step_is_marked_in_its_source_file():
    seen: dict = {}
    for mix, page, variant in (("full+swa+mamba", 1, 0), ("full+swa+mamba", 2, 1), ("full+swa", 4, 0)):
        pair = Pair(mix, page, variant, seed=11)
        pair.engine.observer = lambda e: seen.setdefault(e.source, set()).add((e.step, e.kind))
        for _ in range(150):
            pair.step()
    for source, steps in seen.items():
        file = source_file(source)
        assert file is not None, source
        marked = set(markers(file))
        assert {step for step, _ in steps} <= marked, (source, {s for s, _ in steps} - marked)
    kinds = {kind for steps in seen.values() for _, kind in steps}
    assert {UnifiedKind.VALIDATE, UnifiedKind.WALK, UnifiedKind.TOMBSTONE, UnifiedKind.CASCADE,
            UnifiedKind.RECOVER, UnifiedKind.STATE, UnifiedKind.COPY, UnifiedKind.WINDOW} <= kinds
