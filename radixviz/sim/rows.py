"""The request table: one row per running request, listing the KV slots it reads, in order.

The release sized it from the pool (``pool / context_len * 256`` rows of ``context_len``)
and never ran out in practice. Allocating all of those rows up front costs gigabytes for a
large pool, so this table starts small and doubles up to ``limit`` as requests arrive;
row numbers and contents are the same as if it had been full size from the start.
"""
from __future__ import annotations

import heapq

import torch


def release_row_count(pool_size: int, context_len: int) -> int:
    """How many request rows the first release gave a pool of ``pool_size`` slots."""
    return max(1, int(pool_size / context_len * 256))


class RequestRows:
    """``limit`` rows of ``width`` slot indices; rows handed out lowest number first."""

    def __init__(self, limit: int, width: int, device: str | torch.device = "cpu", start: int = 64):
        self.size = limit
        self.width = width
        self.device = device
        self.req_to_token = torch.zeros((min(limit, start), width), dtype=torch.int64, device=device)
        self._free = list(range(limit))  # a heap, so the lowest free row comes out first
        self._in_use: set[int] = set()
        self._grown = False

    def available_size(self) -> int:
        return len(self._free)

    def alloc(self, n: int) -> list | None:
        """``n`` free rows, or None when fewer are left (nothing taken then)."""
        if n > len(self._free):
            return None
        rows = [heapq.heappop(self._free) for _ in range(n)]
        self._in_use.update(rows)
        if rows and rows[-1] >= self.req_to_token.shape[0]:
            self._grow(max(rows) + 1)
        return rows

    def free(self, row: int) -> None:
        if row not in self._in_use:
            raise ValueError(f"request row {row} is not in use")
        self._in_use.discard(row)
        heapq.heappush(self._free, row)

    def take_grown(self) -> bool:
        """True once after the table was reallocated: views of old rows are stale then."""
        grown, self._grown = self._grown, False
        return grown

    def _grow(self, needed: int) -> None:
        rows = self.req_to_token.shape[0]
        while rows < needed:
            rows *= 2
        table = torch.zeros((min(rows, self.size), self.width), dtype=torch.int64, device=self.device)
        table[:self.req_to_token.shape[0]] = self.req_to_token
        self.req_to_token = table
        self._grown = True
