"""Every slot's reference count at one moment, sharing what did not change with the moment
before: a step that touches a few slots costs those slots' chunks, not the whole pool.

A session keeps one picture of the pool per step it shows; as whole tuples a 32,768-slot
pool cost 256 KiB a step (most of a big session's memory), for the handful of slots an
insert or a free changes. A ``SlotCounts`` reads as the tuple it replaces (length, index,
slice, iteration, ``count``, equality with a tuple) and is as immutable.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Sequence
from itertools import chain

if TYPE_CHECKING:
    from collections.abc import Iterable

SHIFT = 7                 # 128 slots a chunk: an allocation touches one or two, and the
CHUNK, MASK = 1 << SHIFT, (1 << SHIFT) - 1   # list of chunks stays short


class SlotCounts(Sequence):
    __slots__ = ("_chunks", "_size", "new_bytes")
    _chunks: tuple

    def __init__(self, counts: Iterable[int], previous: SlotCounts | None = None) -> None:
        """The counts in ``counts`` (a sequence of ints); every chunk equal to the same chunk
        of ``previous`` is that chunk, shared. ``new_bytes`` is what the chunks not shared
        cost (what keeping this picture adds)."""
        counts = list(counts)
        self._size = len(counts)
        old = previous._chunks if previous is not None and previous._size == self._size else ()
        chunks, new_bytes = [], 0
        for number, start in enumerate(range(0, self._size, CHUNK)):
            chunk = tuple(counts[start:start + CHUNK])
            if number < len(old) and old[number] == chunk:
                chunk = old[number]
            else:
                new_bytes += 8 * len(chunk) + 56
            chunks.append(chunk)
        self._chunks = tuple(chunks)
        self.new_bytes = new_bytes + 8 * len(chunks) + 56

    @classmethod
    def replacing(cls, previous: SlotCounts, chunks: dict) -> SlotCounts:
        """``previous`` with the chunks numbered in ``chunks`` (number -> tuple of counts)
        replaced: the rest are shared without being compared (the caller knows they did not
        change)."""
        counts = cls.__new__(cls)
        kept = list(previous._chunks)
        for number, chunk in chunks.items():
            kept[number] = chunk
        counts._chunks, counts._size = tuple(kept), previous._size
        counts.new_bytes = sum(8 * len(c) + 56 for c in chunks.values()) + 8 * len(kept) + 56
        return counts

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: int | slice):
        if not isinstance(index, int):
            return tuple(self)[index]    # a slice, as a tuple's
        if index < 0:
            index += self._size
            if index < 0:
                raise IndexError("slot index out of range")
        # past the end: the last chunk is short, or there is no such chunk
        return self._chunks[index >> SHIFT][index & MASK]

    def __iter__(self):
        return chain.from_iterable(self._chunks)

    def count(self, value: object) -> int:
        """How many slots have count ``value`` (``count(0)``: the free slots)."""
        return sum(chunk.count(value) for chunk in self._chunks)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SlotCounts):
            return self._size == other._size and all(
                a is b or a == b for a, b in zip(self._chunks, other._chunks))
        if isinstance(other, tuple):
            return self._size == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"SlotCounts({tuple(self)!r})"
