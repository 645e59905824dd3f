"""The pools a session pictures and the scheduler loop allocates from, on the unified cache's
own allocators (cache_counted.py).

``KVPool`` is the facade's ``pool`` (a ``TokenToKVPool``: its counts are the Full slots'
references, its K/V buffers the KV a session computes): its ``alloc`` is SGLang's, slot 0
never handed out, and when the Full or the SWA pool is short it first asks the tree to evict
what the allocation lacks, as SGLang's allocator does (``evict_to_free_tokens``: the tree's
``evict_for_alloc`` with the Full and the SWA shortfall). ``SWAPicture`` and ``MambaPicture``
are the further pools as a session pictures them (contract.SlotPool): 1 a slot in use.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from ...cache.pool import PoolError, TokenToKVPool
from .cache_counted import CountedMambaPool, CountedPages, CountedSWAPages


class KVPool(TokenToKVPool):
    """The Full KV pool behind TokenToKVPool's calls: SGLang's free list, counted slots."""

    def __init__(self, allocator: CountedPages | CountedSWAPages, device: torch.device) -> None:
        full = allocator.full_attn_allocator if isinstance(allocator, CountedSWAPages) else allocator
        super().__init__((full.num_pages + 1) * full.page_size, device=device)
        self.allocator, self.full = allocator, full
        self.mem_state = full.refs   # the counts a session pictures are the allocator's own
        # ``make_room(full_shortfall, swa_shortfall)``: the tree's eviction for an allocation
        self.make_room: Callable[[int, int], None] | None = None

    @property
    def capacity(self) -> int:
        """Slots a request can ever get (the padding page is never handed out)."""
        return self.full.num_pages * self.full.page_size

    def alloc(self, need_size: int) -> torch.Tensor | None:
        """``need_size`` slots in SGLang's order (each with an SWA peer, with the swa
        component), evicting first what the pools lack; None if still too few."""
        if isinstance(need_size, bool) or not isinstance(need_size, int) or need_size < 0:
            raise PoolError(f"cannot allocate {need_size!r} slots")
        slots = self.allocator.alloc(need_size)
        if slots is None and self.make_room is not None:
            self.make_room(*self.shortfalls(need_size))
            slots = self.allocator.alloc(need_size)
        return slots

    def shortfalls(self, need_size: int) -> tuple[int, int]:
        """(Full, SWA) tokens an allocation of ``need_size`` lacks, in whole pages."""
        ps = self.full.page_size
        aligned = -(-need_size // ps) * ps
        swa = 0
        if isinstance(self.allocator, CountedSWAPages):
            swa = max(0, aligned - self.allocator.swa_available_size())
        return max(0, aligned - self.full.available_size()), swa

    def add_refs(self, slots: torch.Tensor | Sequence[int], distinct: bool = False) -> None:
        # ``distinct`` is the shared pool's shortcut; SGLang's counted pages always check
        self.full.add_refs(self._as_slots(slots))

    def free(self, slots: torch.Tensor | Sequence[int], distinct: bool = False) -> int:
        """Drop one reference from each slot; return how many slots went back to the free list
        (whole pages: a partial last page is handed out whole, as SGLang's)."""
        pages = self.allocator.release(self._as_slots(slots))
        return int(pages.numel()) * self.full.page_size

    def available_size(self) -> int:
        """SGLang's: the Full pool's free slots, or with SWA the smaller of both pools' free."""
        return self.allocator.available_size()

    def used_size(self) -> int:
        return self.capacity - self.full.available_size()

    def check_free_list(self) -> None:
        """PoolError unless every page on SGLang's free list is unreferenced, once, and not the
        padding page."""
        pages = self.full.free_pages.tolist()
        if len(set(pages)) != len(pages) or 0 in pages:
            raise PoolError("the Full free list names a page twice, or the padding page")
        if pages and int(self.mem_state.view(-1, self.full.page_size)[pages].sum()) != 0:
            raise PoolError("a page on the Full free list still has a reference")

    def __repr__(self) -> str:
        return f"KVPool(capacity={self.capacity}, free={self.available_size()}, page={self.full.page_size})"


class SWAPicture:
    """The SWA pool as a session pictures it: each slot 1 while a Full slot is paired with it."""

    def __init__(self, allocator: CountedSWAPages) -> None:
        self.allocator = allocator

    @property
    def size(self) -> int:
        return int(self.allocator.swa_refs.numel())

    def picture_version(self) -> tuple[int, int]:
        return id(self.allocator), self.allocator.swa_refs._version

    def picture(self, previous: Sequence[int] | None) -> Sequence[int]:
        return tuple(self.allocator.swa_refs.tolist())


class MambaPicture:
    """The Mamba state pool as a session pictures it: slot 0 is never handed out; 1 a state held."""

    def __init__(self, pool: CountedMambaPool) -> None:
        self.pool = pool

    @property
    def size(self) -> int:
        return self.pool.size + 1

    def picture_version(self) -> tuple[int, int]:
        return id(self.pool), self.pool.version

    def picture(self, previous: Sequence[int] | None) -> Sequence[int]:
        counts = [1] * self.size
        counts[0] = 0
        for slot in self.pool.free_slots.tolist():
            counts[slot] = 0
        return tuple(counts)
