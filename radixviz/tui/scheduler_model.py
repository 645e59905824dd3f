"""Stepping through a finished simulation, batch by batch, with running totals.

Pure data over ``SimResult.records`` (a run with ``record=True``): no Textual, so tests and
the screen share it. Totals are prefix sums, so jumping anywhere is O(1).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass
from itertools import accumulate

from radixviz.script.frames import Marks

if TYPE_CHECKING:
    from collections.abc import Collection
    from radixviz.sim.scheduler import SimResult

_BAD_ENDS = ("refused", "stuck")   # events that mean a request will never run
MAX_GHOSTS = 6   # evicted leaves listed under the tree; the summary line counts them all


@dataclass(frozen=True)
class Totals:
    """What the run has done up to and including one batch."""
    hit_tokens: int
    prefill_computed: int
    decode_computed: int
    evicted_tokens: int
    finished: int
    retracted: int
    refused: int
    host_hit_tokens: int = 0    # of hit_tokens, loaded back from the host (engine hicache)

    @property
    def hit_rate(self) -> float:
        # same definition as SimStats.hit_rate: reused prompt tokens over all prompt tokens
        total = self.hit_tokens + self.prefill_computed
        return self.hit_tokens / total if total else 0.0


def _running(values) -> list:
    return list(accumulate(values, initial=0))


class BatchTimeline:
    """The records of one run and a cursor on them."""

    def __init__(self, result: SimResult, workload: str = ""):
        self.result, self.workload = result, workload
        self.settings = result.settings
        self.records = list(result.records)
        self.index = 0
        recs = self.records
        self._hit = _running(r.hit_tokens for r in recs)
        self._prefill = _running(r.computed_tokens if r.kind == "prefill" else 0 for r in recs)
        self._decode = _running(r.computed_tokens if r.kind == "decode" else 0 for r in recs)
        self._evicted = _running(r.evicted_tokens for r in recs)
        self._finished = _running(len(r.finished) for r in recs)
        self._retracted = _running(_count(r, ("retracted",)) for r in recs)
        self._refused = _running(_count(r, _BAD_ENDS) for r in recs)
        self._host_hit = _running(r.host_hit_tokens for r in recs)
        # prefill passes and decode passes that tried the queue first: where admission happens
        self.rounds = [r.index for r in recs if r.kind == "prefill" or r.decisions]

    def __len__(self) -> int:
        return len(self.records)

    @property
    def record(self):
        return self.records[self.index] if self.records else None

    @property
    def previous(self):
        """The record before the current one (its tree tells what this batch created/evicted)."""
        return self.records[self.index - 1] if self.index > 0 else None

    def go(self, index: int) -> bool:
        """Move to ``index`` (clamped); True if the cursor moved."""
        if not self.records:
            return False
        index = max(0, min(len(self.records) - 1, index))
        moved, self.index = index != self.index, index
        return moved

    def step(self, delta: int) -> bool:
        return self.go(self.index + delta)

    def next_round(self, direction: int) -> bool:
        """Jump to the next (+1) or previous (-1) pass that offered the queue places."""
        if direction > 0:
            later = [i for i in self.rounds if i > self.index]
            return self.go(later[0]) if later else False
        earlier = [i for i in self.rounds if i < self.index]
        return self.go(earlier[-1]) if earlier else False

    def tree_marks(self) -> Marks:
        """The nodes this batch created (+) and the leaves it evicted (†), found by comparing
        its tree with the one before."""
        record, previous = self.record, self.previous
        if previous is None:
            return Marks(created=tuple(record.tree.nodes))
        before, after = previous.tree.nodes, record.tree.nodes
        created = tuple(i for i in after if i not in before)
        gone = [(i, before[i].key) for i in before if i not in after and before[i].key]
        return Marks(created=created, evicted=tuple(gone[:MAX_GHOSTS]))

    def totals(self, index: int | None = None) -> Totals:
        i = (self.index if index is None else index) + 1
        return Totals(self._hit[i], self._prefill[i], self._decode[i], self._evicted[i],
                      self._finished[i], self._retracted[i], self._refused[i], self._host_hit[i])


def _count(record, kinds: Collection[str]) -> int:
    return sum(1 for e in record.events if e.kind in kinds)
