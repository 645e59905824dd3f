"""A prompt made of a trace's blocks, keyed by runs of tokens instead of token by token.

A Mooncake-style trace names each 512-token block of a prompt by a hash id; the token path
turns block ``b`` into the tokens ``b * block_size + i`` and the tree compares them one by
one. Here a block stays whole where the tree can never cut it: a *run* ``(first token,
length)`` stands for that many consecutive tokens, and the engine compares runs as it
compares tokens (equal runs are equal tokens). A prompt is a tuple of such units; a unit
that is a plain int is one token (an output token, or a token a model could also emit).

Exactness rests on one rule, kept by whoever builds the units (traces/block_cuts.py): a
run never straddles a place where two keys of the run could part ways. Two prompts built
from blocks part ways at a block boundary (different ids are different tokens from the
first one on), where one of them ends inside a block (a part-filled last block: every such
length is a cut of that block, read from the trace before the run), or where an output
token meets a prompt token (only tokens below the model's vocabulary can be met there,
and those are plain ints). So every node boundary the token path would make is a unit
boundary here, the two trees have the same shape, and the same walk visits the same nodes
in the same order: the same matches, splits, access times and evictions
(tests/test_block_units.py runs both and compares every pass).

``BlockPrompt`` reads as its token ids (length, indexing, slicing, iteration, equality), so
the scheduler loop and the model need not know; only the engine's keys use ``units``.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from itertools import accumulate, islice
from typing import Any, overload


def unit_tokens(unit: Any) -> int:
    """How many tokens ``unit`` stands for: a run's length, else one."""
    return unit[1] if unit.__class__ is tuple else 1


def units_tokens(units: Sequence) -> int:
    """How many tokens a sequence of units stands for."""
    return sum(u[1] if u.__class__ is tuple else 1 for u in units)


def unit_ids(unit: Any):
    """The token ids ``unit`` stands for."""
    return range(unit[0], unit[0] + unit[1]) if unit.__class__ is tuple else (unit,)


class BlockPrompt(Sequence):
    """A prompt as units (see the module's docstring): a sequence of token ids whose
    ``units`` are what the engine is keyed by. Immutable, like the tuple it stands for."""

    __slots__ = ("units", "size", "_ends")

    def __init__(self, units: tuple, size: int | None = None):
        self.units = units
        self.size = units_tokens(units) if size is None else size
        self._ends: list | None = None      # token offset where each unit ends, when asked

    def ends(self) -> list:
        """The token offset after each unit (the boundaries a slice may keep as units)."""
        if self._ends is None:
            self._ends = list(accumulate(map(unit_tokens, self.units)))
        return self._ends

    def prefix(self, n: int) -> BlockPrompt | None:
        """The first ``n`` tokens as whole units, or None when ``n`` cuts a run."""
        if n == self.size:
            return self
        if n == 0:
            return BlockPrompt((), 0)
        ends = self.ends()
        k = bisect_left(ends, n)
        return BlockPrompt(self.units[:k + 1], n) if k < len(ends) and ends[k] == n else None

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> BlockPrompt | tuple: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(self.size)
            if start == 0 and step == 1:
                kept = self.prefix(max(stop, 0))
                if kept is not None:
                    return kept
            return tuple(self)[index]
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError("prompt index out of range")
        if index >= self.size - 2:     # the model asks for the last two tokens: walk from the end
            last, back = self.units[-1], self.size - index
            if last.__class__ is tuple and back <= last[1]:   # inside the last run (most prompts)
                return last[0] + last[1] - back
            at = self.size
            for unit in reversed(self.units):
                at -= unit_tokens(unit)
                if at <= index:
                    return unit_ids(unit)[index - at]
        ends = self.ends()
        k = bisect_left(ends, index + 1)
        return unit_ids(self.units[k])[index - (ends[k] - unit_tokens(self.units[k]))]

    def __iter__(self) -> Iterator:
        for unit in self.units:
            yield from unit_ids(unit)

    def __add__(self, other: Sequence) -> BlockPrompt:
        """This prompt followed by ``other``: another BlockPrompt's units, or tokens, one unit each."""
        if isinstance(other, BlockPrompt):
            return BlockPrompt(self.units + other.units, self.size + other.size)
        if not other:
            return self
        added = tuple(other)
        return BlockPrompt(self.units + added, self.size + len(added))

    def __radd__(self, other: Sequence) -> BlockPrompt:
        added = tuple(other)
        return BlockPrompt(added + self.units, self.size + len(added))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BlockPrompt):
            if self.units == other.units:
                return True
            return self.size == other.size and tuple(self) == tuple(other)
        if isinstance(other, tuple):
            return self.size == len(other) and tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{u[0]}+{u[1]}" if u.__class__ is tuple else repr(u) for u in islice(self.units, 6))
        more = ", …" if len(self.units) > 6 else ""
        return f"BlockPrompt({self.size} tokens: {shown}{more})"
