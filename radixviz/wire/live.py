"""What the watch app shows, kept as the stream goes: one snapshot per applied batch (the
newest ``keep``), and the live figures. No UI here; the app reads ``Moment``s."""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from .core import Applied, WatchCore
from .events import WIRE_WORDS
from .tiers import namespace_name, tier_name, tier_rank
from .tree_snapshot import Decode, block_snapshot, largest_subtrees, shared_prefixes

KEEP = 1000   # batches one can step back through


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


class LiveView:
    def __init__(self, core: WatchCore, decode: Decode | None = None, keep: int = KEEP,
                 clock=time.monotonic) -> None:
        self.core, self.decode, self.clock = core, decode, clock
        self.moments: deque = deque(maxlen=keep)
        self.rates: deque = deque(maxlen=64)     # (time, stored total, removed total)
        core.listeners.append(self.on_applied)

    def on_applied(self, item: Applied) -> None:
        tree = self.core.tree(item.rank)
        snapshot = block_snapshot(tree, self.decode)
        self.moments.append(Moment(item.seq, item.rank, snapshot, self.figures(item, snapshot)))

    def per_second(self) -> tuple[float, float]:
        stored = sum(t.stored_total for t in self.core.trees.values())
        removed = sum(t.removed_total for t in self.core.trees.values())
        now = self.clock()
        self.rates.append((now, stored, removed))
        while len(self.rates) > 2 and now - self.rates[0][0] > 5:
            self.rates.popleft()
        t0, s0, r0 = self.rates[0]
        span = now - t0
        return ((stored - s0) / span, (removed - r0) / span) if span > 0 else (0.0, 0.0)

    def figures(self, item: Applied, snapshot) -> tuple:
        tree, problems = self.core.tree(item.rank), self.core.problems
        stored_s, removed_s = self.per_second()
        lines = [f"seq {item.seq} · rank {item.rank} of {sorted(self.core.trees)}",
                 f"{self.core.batches:,} batches · {stored_s:,.1f} stored/s · {removed_s:,.1f} removed/s"]
        if item.message.wire is not None:
            lines.append(f"wire: {WIRE_WORDS.get(item.message.wire, item.message.wire)}")
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
        return tuple(lines)


def namespace_lines(tree) -> list[str]:
    """A line for the namespaces held (adapters, salts) and one for the sessions that
    stored blocks (v0.5.23's fields), each with its block count; none when there are none."""
    spaces: dict = {}
    sessions: dict = {}
    for block in tree.blocks.values():
        space = namespace_name(block)
        if space is not None:
            spaces[space] = spaces.get(space, 0) + 1
        if block.session_id is not None:
            sessions[block.session_id] = sessions.get(block.session_id, 0) + 1
    lines = []
    if spaces:
        lines.append("namespaces: " + ", ".join(f"{name} {n:,}" for name, n in sorted(spaces.items())))
    if sessions:
        shown = sorted(sessions.items(), key=lambda x: -x[1])[:5]
        more = f" (+{len(sessions) - 5} more)" if len(sessions) > 5 else ""
        lines.append("stored by sessions: " + ", ".join(f"{s} {n:,}" for s, n in shown) + more)
    return lines
