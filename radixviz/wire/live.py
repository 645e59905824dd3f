"""What the watch app shows, kept as the stream goes. No UI here; the app reads ``Moment``s.

Two threads meet here. The feeder (sockets or a recording) applies batches to the core's
trees and, for each, puts the changes it made in ``inbox`` (``arrived``). The app's thread
``take``s them: each is applied to its own copy of that rank's tree (so drawing never reads
a tree the feeder is changing) and kept in the history. The history keeps each batch's
changes, not a tree per batch, within ``history_mb``: stepping back takes the changes back
on a copy of the tree, one batch a key. A snapshot is made when one is shown, again only
where the tree changed (tree_snapshot.TreeBuilder).
"""
from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass
from itertools import takewhile
from typing import TYPE_CHECKING

from .blocks import BlockTree
from .events import WIRE_WORDS
from .tiers import tier_name, tier_rank
from .tree_snapshot import Decode, TreeBuilder, largest_subtrees, shared_prefixes

if TYPE_CHECKING:
    from .core import Applied, WatchCore

DEFAULT_HISTORY_MB = 200   # the changes kept to step back through (--history-mb)
ENTRY_BYTES = 200          # an entry's own objects
CHANGE_BYTES = 120         # a change's tuple and key
SEED_CHANGES = 2_000       # a batch changing more blocks than this (and a quarter of the tree) comes whole
BEHIND_KEPT = 4             # ← steps whose picture before is kept for → (each a copy of the tree)
QUIET_S = 3.0              # past this with nothing from the publisher, the figures say so


class NoMarks:
    """A stream marks nothing (the tree pane reads a frame's marks; every field empty)."""
    current = path = split = wrong = evicted = created = partial = slots = more_slots = ()


NO_MARKS = NoMarks()


@dataclass(frozen=True)
class Moment:
    seq: int
    rank: int
    tree: object            # TreeSnapshot
    figures: tuple          # lines of text
    marks: object = NO_MARKS   # the tree pane reads ``frame.marks``


@dataclass
class Entry:
    """One applied batch as the history keeps it: the changes it made to its rank's tree."""
    number: int             # its place in the history, counted from the first batch
    seq: int
    rank: int
    changes: list
    seed: BlockTree | None  # the rank's tree after it, for the first batch of a rank
    wire: str | None = None  # the wire it came in (events.py's names)
    size: int = 0


@dataclass
class _Cursor:
    """The app shows an earlier batch: the rank's tree as it was right after entry ``at``."""
    rank: int
    at: int
    tree: BlockTree
    builder: TreeBuilder


class LiveView:
    def __init__(self, core: WatchCore, decode: Decode | None = None, history_mb: float = DEFAULT_HISTORY_MB,
                 clock=time.monotonic) -> None:
        self.core, self.decode, self.clock = core, decode, clock
        self.budget = int(history_mb * 2 ** 20)
        self.inbox: deque = deque()          # Entry, appended by the feeder's thread
        self.history: deque = deque()        # Entry, oldest first
        self.history_bytes = 0
        self.dropped = 0                     # entries dropped from the history's front
        self.kept: dict[int, int] = {}       # rank -> entries of that rank in the history
        self.trees: dict[int, BlockTree] = {}
        self.builders: dict[int, TreeBuilder] = {}
        self.cursor: _Cursor | None = None
        self.rank: int | None = None         # the rank shown; None: the newest batch's
        self.rates: deque = deque(maxlen=64)     # (time, stored total, removed total)
        self._numbers = 0
        self._seeded: set = set()            # ranks whose first batch went out (feeder's side)
        self._shown: tuple | None = None     # (what it showed, the Moment) of the last ``moment()``
        self._ahead: tuple | None = None     # (the state it was made in, cursor, shown) by prepare_back
        self._behind: list = []              # (the state after ←, the cursor and shown before it), newest last
        core.record_changes = True
        core.listeners.append(self.arrived)

    # ------------------------------------------------------------------ the feeder's thread

    def arrived(self, item: Applied) -> None:
        """A batch was applied to the core (on the feeder's thread): pass its changes on."""
        tree = self.core.tree(item.rank)
        changes = tree.changes if tree.changes is not None else []
        tree.changes = []
        seed = None
        # the first batch of a rank brings its whole tree; so does a batch that changed a
        # large part of it (a copy is made in C, the changes would be made again in Python)
        if item.rank not in self._seeded or len(changes) > max(SEED_CHANGES, len(tree.blocks) // 4):
            self._seeded.add(item.rank)
            seed = tree.copy()
        self._numbers += 1
        self.inbox.append(Entry(self._numbers, item.seq, item.rank, changes, seed,
                                item.message.wire))

    # ------------------------------------------------------------------ the app's thread

    def take(self, budget_s: float = 0.03) -> int:
        """Apply what arrived to the app's trees and history, for about ``budget_s`` at most
        (at least one batch); how many were taken."""
        start, taken = self.clock(), 0
        while self.inbox and (taken == 0 or self.clock() - start < budget_s):
            entry = self.inbox.popleft()
            if entry.seed is not None:
                self.trees[entry.rank] = entry.seed
                builder = self.builders.get(entry.rank)
                if builder is None:
                    self.builders[entry.rank] = TreeBuilder(entry.seed, self.decode)
                else:
                    builder.forget(entry.seed)
                entry.seed = None
            else:
                self.trees[entry.rank].replay(entry.changes)
                self.builders[entry.rank].changed(entry.changes)
            self._keep(entry)
            taken += 1
        return taken

    def _keep(self, entry: Entry) -> None:
        entry.size = ENTRY_BYTES + sum(CHANGE_BYTES + _removed_bytes(before, after)
                                       for _key, before, after in entry.changes)
        self.history.append(entry)
        self.history_bytes += entry.size
        self.kept[entry.rank] = self.kept.get(entry.rank, 0) + 1
        while self.history_bytes > self.budget and len(self.history) > 1:
            old = self.history.popleft()
            self.history_bytes -= old.size
            self.kept[old.rank] -= 1
            self.dropped += 1

    @property
    def newest(self) -> Entry | None:
        return self.history[-1] if self.history else None

    def shown_rank(self) -> int | None:
        if self.cursor is not None:
            return self.cursor.rank
        if self.rank is not None and self.rank in self.trees:
            return self.rank
        newest = self.newest
        return newest.rank if newest is not None else None

    def _entry(self, number: int) -> Entry | None:
        first = self.history[0].number if self.history else 0
        index = number - first
        return self.history[index] if 0 <= index < len(self.history) else None

    def _rank_entries(self, rank: int):
        """``rank``'s kept entries, newest first."""
        return (e for e in reversed(self.history) if e.rank == rank)

    def _after(self, rank: int, at: int) -> list:
        """``rank``'s kept entries after entry ``at``, newest first: a walk back from the
        newest that stops at ``at`` (entry numbers rise), not one over the whole history."""
        return [e for e in takewhile(lambda e: e.number > at, reversed(self.history)) if e.rank == rank]

    # ------------------------------------------------------------------ stepping

    def back(self) -> bool:
        """Show the batch before the one shown (of the same rank); False at the oldest kept."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == self._state():   # made in idle time (prepare_back)
            # what was shown stays whole (ahead was made on copies): → shows it again
            behind = (self.cursor, self._shown)
            self.cursor, self._shown = ahead[1], ahead[2]
            self._behind = [*self._behind[-(BEHIND_KEPT - 1):], (self._state(), *behind)]
            return True
        cursor = self._back_of(self.cursor, copy=False)
        if cursor is None:
            return False
        self.cursor = cursor
        return True

    def prepare_back(self, arrived_at: float | None = None) -> Moment | None:
        """Make, in idle time, what ← will show (the tree a batch earlier, its picture and
        figures) on copies, so the key finds it made: on a comb thousands of levels deep a
        batch at the bottom remakes every edge above it. The Moment, or None at the oldest."""
        state = self._state()
        if self._ahead is not None and self._ahead[0] == state:
            return self._ahead[2][1]
        cursor = self._back_of(self.cursor, copy=True)
        if cursor is None:
            self._ahead = None
            return None
        shown = self._moment_of(cursor.rank, cursor.tree, cursor.builder, cursor.at, True, arrived_at)
        self._ahead = (state, cursor, shown)
        return shown[1]

    def _state(self) -> tuple:
        cursor = self.cursor
        return (self.shown_rank(), id(cursor), cursor.at if cursor is not None else None, self.core.batches,
                len(self.history), self.dropped)

    def _back_of(self, cursor: _Cursor | None, copy: bool) -> _Cursor | None:
        """``cursor`` (None: the live tree, copied) stepped back one batch of its rank; a copy
        of it when ``copy``; None at the oldest batch kept."""
        rank = self.shown_rank()
        if rank is None:
            return None
        if cursor is None:
            newest = next(self._rank_entries(rank), None)
            if newest is None:
                return None
            tree = self.trees[rank].copy()
            cursor = _Cursor(rank, newest.number, tree, self.builders[rank].copy(tree))
        elif copy:
            tree = cursor.tree.copy()
            cursor = _Cursor(cursor.rank, cursor.at, tree, cursor.builder.copy(tree))
        entry = self._entry(cursor.at)
        before = next((e for e in self._rank_entries(rank) if e.number < cursor.at), None)
        if entry is None or before is None:
            return None
        cursor.tree.replay(entry.changes, undo=True)
        cursor.builder.changed(entry.changes)
        cursor.at = before.number
        return cursor

    def forward(self) -> bool:
        """Show the batch after the one shown; back to following the stream after the newest."""
        cursor = self.cursor
        if cursor is None:
            return False
        behind = self._behind.pop() if self._behind else None
        if behind is not None and behind[0] == self._state():   # ← came from there, nothing changed since
            self.cursor, self._shown = behind[1], behind[2]
            return True
        self._behind = []
        later = self._after(cursor.rank, cursor.at)
        after = later[-1] if later else None
        if after is None or after is later[0]:   # the newest: follow the stream again
            self.cursor = None
            return True
        cursor.tree.replay(after.changes)
        cursor.builder.changed(after.changes)
        cursor.at = after.number
        return True

    def follow(self) -> None:
        self.cursor = None

    def next_rank(self) -> None:
        ranks = sorted(self.trees)
        if ranks:
            at = self.shown_rank()
            nxt = ranks[(ranks.index(at) + 1) % len(ranks)] if at in ranks else ranks[0]
            self.rank = None if len(ranks) == 1 else nxt
        self.cursor = None

    def place(self) -> tuple[int, int]:
        """(the shown batch's place among its rank's kept batches, from 1; how many are kept)."""
        rank = self.shown_rank()
        count = self.kept.get(rank, 0) if rank is not None else 0
        if self.cursor is None:
            return count, count
        return count - len(self._after(self.cursor.rank, self.cursor.at)), count

    # ------------------------------------------------------------------ what is shown

    def moment(self, arrived_at: float | None = None) -> Moment | None:
        """The batch shown, its tree and figures; None before the first batch."""
        rank = self.shown_rank()
        if rank is None:
            return None
        cursor = self.cursor
        if cursor is not None:
            tree, builder, number = cursor.tree, cursor.builder, cursor.at
        else:
            tree, builder = self.trees[rank], self.builders[rank]
            newest = next(self._rank_entries(rank), None)
            number = newest.number if newest is not None else 0
        self._shown = self._moment_of(rank, tree, builder, number, cursor is not None, arrived_at)
        return self._shown[1]

    def _moment_of(self, rank: int, tree: BlockTree, builder: TreeBuilder, number: int, stepping: bool,
                   arrived_at: float | None) -> tuple:
        """(its key, the Moment) of batch ``number`` of ``rank`` on ``tree``; the last shown
        again when nothing it says has changed."""
        entry = self._entry(number)
        seq = entry.seq if entry is not None else (tree.last_seq or 0)
        wire = entry.wire if entry is not None else None
        quiet = self.quiet_for(arrived_at)
        key = (rank, number, stepping, self.core.batches, quiet // 1 if quiet >= QUIET_S else 0)
        if self._shown is not None and self._shown[0] == key:
            return self._shown
        snapshot = builder.snapshot()
        return key, Moment(seq, rank, snapshot, self.figures(seq, rank, tree, snapshot, arrived_at, wire))

    def quiet_for(self, arrived_at: float | None) -> float:
        """Seconds since the publisher last sent anything (0 while it sends, or before it did)."""
        if arrived_at is None:
            return 0.0
        return max(0.0, self.clock() - arrived_at)

    def per_second(self) -> tuple[float, float]:
        stored = sum(t.stored_total for t in list(self.core.trees.values()))
        removed = sum(t.removed_total for t in list(self.core.trees.values()))
        now = self.clock()
        self.rates.append((now, stored, removed))
        while len(self.rates) > 2 and now - self.rates[0][0] > 5:
            self.rates.popleft()
        t0, s0, r0 = self.rates[0]
        span = now - t0
        return ((stored - s0) / span, (removed - r0) / span) if span > 0 else (0.0, 0.0)

    def figures(self, seq: int, rank: int, tree: BlockTree, snapshot, arrived_at: float | None,
                wire: str | None = None) -> tuple:
        problems = self.core.problems
        stored_s, removed_s = self.per_second()
        lines = [f"seq {seq} · rank {rank} of {sorted(self.trees)}",
                 f"{self.core.batches:,} batches · {stored_s:,.1f} stored/s · {removed_s:,.1f} removed/s"]
        quiet = self.quiet_for(arrived_at)
        if quiet >= QUIET_S:
            lines.append(f"nothing from the publisher for {quiet:,.0f} s")
        if wire is not None:
            lines.append(f"wire: {WIRE_WORDS.get(wire, wire)}")
        for medium, (blocks, tokens) in sorted(tree.tier_figures().items(), key=lambda x: tier_rank(x[0])):
            lines.append(f"{tier_name(medium)}: {blocks:,} blocks, {tokens:,} tokens")
        if not tree.blocks:
            lines.append("nothing held")
        lines.extend(namespace_lines(tree))
        lines.append("deepest shared prefixes: " + (", ".join(
            f"{depth} tokens ({branches} ways)" for depth, branches in shared_prefixes(snapshot)) or "none"))
        lines.append("largest subtrees: " + (", ".join(
            f"{start!r}… {tokens:,}" for start, tokens in largest_subtrees(snapshot)) or "none"))
        troubles = {k: v for k, v in problems.as_dict().items() if v}
        lines.append("problems: " + (", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in troubles.items())
                                     or "none"))
        if self.dropped:
            lines.append(f"history: the oldest {self.dropped:,} batches dropped (--history-mb)")
        return tuple(lines)


def namespace_lines(tree: BlockTree) -> list[str]:
    """A line for the namespaces held (adapters, salts) and one for the sessions that
    stored blocks (v0.5.23's fields), each with its block count; none when there are none.
    The tree counts them as blocks come and go, once a view has asked (its index)."""
    tree.ensure_index()
    lines = []
    if tree.spaces:
        lines.append("namespaces: " + ", ".join(f"{name} {n:,}" for name, n in sorted(tree.spaces.items())))
    if tree.sessions:
        shown = sorted(tree.sessions.items(), key=lambda x: -x[1])[:5]
        more = f" (+{len(tree.sessions) - 5} more)" if len(tree.sessions) > 5 else ""
        lines.append("stored by sessions: " + ", ".join(f"{s} {n:,}" for s, n in shown) + more)
    return lines


def _removed_bytes(before, after) -> int:
    """What keeping a change costs beyond its tuple: a block only the history still holds."""
    if before is None or after is not None:
        return 0
    return sys.getsizeof(before) + sys.getsizeof(before.token_ids) + 8 * len(before.token_ids)
