"""A session's frames, with a memory budget: past it, the oldest frames are dropped.

Frames are numbered from the session's first step for ever (``Frame.index``, an operation's
``first_frame``/``last_frame``, the stepper's position), so dropping the oldest ones changes
no number: ``len()`` counts every frame made, ``frames[i]`` is frame ``i`` while it is kept,
and ``first`` is the oldest one kept. Iterating or slicing yields the kept frames only.

What a frame costs is estimated as it is added (``Session._add_frame``): the frame's own
objects, the tree snapshots it does not share with the frame before (the nodes along the
paths a step changed) and the chunks of pool counts it does not share. Shared structure is
counted once, by the frame that made it; dropping a frame frees at most what it was counted,
so what the kept frames hold stays under the budget plus one whole tree and pool.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Sequence
from itertools import islice

from radixviz.settings import HISTORY_MB

if TYPE_CHECKING:
    from collections.abc import Iterable
    from .frames import Frame

DEFAULT_LIMIT_MB = HISTORY_MB.default


class FrameDropped(IndexError):
    """A frame older than the oldest one kept."""


class FrameHistory(Sequence):
    def __init__(self, limit_mb: float | None = DEFAULT_LIMIT_MB):
        """Frames, keeping at most ``limit_mb`` MiB of them (estimated; None: no limit)."""
        self.limit_mb = limit_mb
        self.limit_bytes = None if limit_mb is None else int(limit_mb * 2**20)
        self._frames: list = []     # the kept frames, from self._start on
        self._costs: list = []      # what each kept frame was counted
        self._start = 0             # list position of the oldest kept frame
        self.dropped = 0            # frames dropped so far (the index of the oldest kept one)
        self.kept_bytes = 0

    @property
    def first(self) -> int:
        """Index of the oldest frame kept (0 until a frame has been dropped)."""
        return self.dropped

    def append(self, frame: Frame, cost: int = 0) -> None:
        """Keep ``frame`` (counted ``cost`` bytes); drop the oldest frames while the kept ones
        cost more than the limit (the newest frame always stays)."""
        self._frames.append(frame)
        self._costs.append(cost)
        self.kept_bytes += cost
        limit = self.limit_bytes
        if limit is None or self.kept_bytes <= limit:
            return
        while self.kept_bytes > limit and len(self._frames) - self._start > 1:
            self.kept_bytes -= self._costs[self._start]
            self._frames[self._start] = self._costs[self._start] = None
            self._start += 1
            self.dropped += 1
        if self._start > 1024 and self._start * 2 > len(self._frames):
            # compact now and then, so dropping stays cheap and the list stays short
            del self._frames[:self._start], self._costs[:self._start]
            self._start = 0

    def kept(self, indexes: Iterable[int]) -> list:
        """The frames among ``indexes`` (an operation's ``frame_range``) still kept."""
        return [self[i] for i in indexes if i >= self.dropped]

    def __len__(self) -> int:
        return self.dropped + len(self._frames) - self._start

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self))) if i >= self.dropped]
        if index < 0:
            index += len(self)
        if index < self.dropped:
            if index < 0:
                raise IndexError("frame index out of range")
            raise FrameDropped(f"step {index + 1} was dropped to keep the session's memory under "
                               f"{self.limit_mb:g} MB (the oldest kept is step {self.dropped + 1})")
        return self._frames[self._start + index - self.dropped]

    def __iter__(self):
        return islice(self._frames, self._start, None)

    def __eq__(self, other: object) -> bool:
        """Equal frames from the same first one (a list counts as frames from step 1)."""
        if isinstance(other, FrameHistory):
            return self.dropped == other.dropped and list(self) == list(other)
        if isinstance(other, list):
            return self.dropped == 0 and list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like the list it stands in for

    def __bool__(self) -> bool:
        return len(self) > 0

