"""The unified cache's pools as the rest of radixviz drives them: SGLang's allocators
(cache_pools.py: slot 0 reserved, its free-list order) with a reference count per Full slot.

A session and the scheduler loop hold the backbone pool as every engine's (the facade's
``pool``: ``alloc``, ``add_refs``, ``free``), and the loop keeps the first release's
bookkeeping: a running request holds one reference to each slot it reads, the tree one to
each slot it owns. So the count lives here, under SGLang's free lists: a page goes back to
its list when every slot of it is down to no reference, in the order SGLang's allocator
frees (one token a page: to the back; pages: to the front). With one holder a slot, which is
all a script ever makes, this is SGLang's allocator call for call.

An SWA slot is its Full slot's peer (``full_to_swa_index_mapping``): it goes back when its
Full slot does, or on its own when the tree makes an SWA tombstone. ``swa_refs`` counts the
Full slots paired with each SWA slot, so an SWA page returns when none is. A ``listener``
(the facade's eviction) hears each stretch of slots that became free, by component.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ...cache.pool import PoolError
from .cache_pools import MambaPool, SWATokenToKVPoolAllocator, TokenToKVPoolAllocator

Listener = Callable[[str, torch.Tensor], None]   # (component name, slots that became free)


def _in_order(ids: torch.Tensor) -> torch.Tensor:
    """``ids`` without repeats, each where it first appears (SGLang frees pages in the
    order of the slots it is given)."""
    if ids.numel() < 2:
        return ids
    array = ids.cpu().numpy()
    _, first = np.unique(array, return_index=True)
    if len(first) == len(array):
        return ids
    return ids[torch.from_numpy(np.sort(first)).to(ids.device)]


class CountedPages(TokenToKVPoolAllocator):
    """SGLang's Full KV allocator with a reference count a slot (``refs``)."""

    listener: Listener | None = None

    def clear(self) -> None:
        super().clear()
        slots = (self.num_pages + 1) * self.page_size
        if getattr(self, "refs", None) is None:
            self.refs = torch.zeros(slots, dtype=torch.int32, device=self.device)
        else:
            self.refs.zero_()   # the same tensor: a session's picture follows it

    def alloc(self, need_size: int) -> torch.Tensor | None:
        slots = super().alloc(need_size)
        if slots is not None and slots.numel():
            self.refs.index_fill_(0, slots, 1)
        return slots

    def add_refs(self, slots: torch.Tensor) -> None:
        if slots.numel() == 0:
            return
        if int(self.refs[slots].min()) <= 0:
            raise PoolError(f"slot {int(slots[self.refs[slots] <= 0][0])} is free: it has no reference to share")
        self.refs.index_put_((slots,), torch.ones((), dtype=torch.int32, device=self.device), accumulate=True)

    def release(self, slots: torch.Tensor) -> torch.Tensor:
        """Drop one reference from each of ``slots``; the pages left with none go back to the
        free list. Returns those pages' ids (PoolError, nothing changed, for a slot released
        more often than it is held)."""
        return self.release_slots(slots)[0]

    def release_slots(self, slots: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``release``, and the slots left with no reference (their pages may stay taken)."""
        if slots.numel() == 0:
            return slots, slots
        one = torch.ones((), dtype=torch.int32, device=self.device)
        self.refs.index_put_((slots,), -one, accumulate=True)
        after = self.refs[slots]
        if int(after.min()) < 0:
            self.refs.index_put_((slots,), one, accumulate=True)
            raise PoolError(f"slot {int(slots[after < 0][0])} is free: it has no reference to release")
        zero = slots[after == 0]
        pages = _in_order(zero // self.page_size)
        if self.page_size > 1 and pages.numel():
            pages = pages[self.refs.view(-1, self.page_size)[pages].sum(dim=1) == 0]
        self.free_page_ids(pages)
        if self.listener is not None and pages.numel():
            self.listener("full", self.page_slots(pages))
        return pages, zero

    def page_slots(self, pages: torch.Tensor) -> torch.Tensor:
        if self.page_size == 1:
            return pages
        return (pages[:, None] * self.page_size + torch.arange(self.page_size, device=self.device)).reshape(-1)

    def free_segment(self, free_index: torch.Tensor) -> None:
        self.release(free_index)

    free_full_segment = free_segment


class CountedSWAPages(SWATokenToKVPoolAllocator):
    """SGLang's paired Full and SWA allocators, the Full side counted (``CountedPages``)."""

    listener: Listener | None = None

    def __init__(self, size: int, size_swa: int, page_size: int = 1, device: str | torch.device = "cpu") -> None:
        self.page_size = page_size
        self.full_attn_allocator: CountedPages = CountedPages(size, page_size, device)
        self.swa_attn_allocator = TokenToKVPoolAllocator(size_swa, page_size, device)
        dev = self.full_attn_allocator.device
        self.full_to_swa_index_mapping = torch.zeros(size + page_size + 1, dtype=torch.int64, device=dev)
        self.swa_refs = torch.zeros((self.swa_attn_allocator.num_pages + 1) * page_size, dtype=torch.int32, device=dev)

    def clear(self) -> None:
        super().clear()
        self.swa_refs.zero_()

    def alloc(self, need_size: int) -> torch.Tensor | None:
        """Full slots, each with a fresh SWA peer (a partial last page taken whole on both
        sides, as SGLang's); None when either pool is short."""
        ps = self.page_size
        aligned = -(-need_size // ps) * ps
        if aligned > self.full_available_size() or aligned > self.swa_available_size():
            return None
        full = TokenToKVPoolAllocator.alloc(self.full_attn_allocator, aligned)
        swa = self.swa_attn_allocator.alloc(aligned)
        assert full is not None and swa is not None
        # the slots handed out are paired; a partial last page's others stay unpaired, so that
        # each SWA slot goes back when its own Full slot does
        taken, peers = full[:need_size], swa[:need_size]
        self.full_to_swa_index_mapping[taken] = peers
        self.swa_refs[peers] = 1
        if taken.numel():
            self.full_attn_allocator.refs.index_fill_(0, taken, 1)
        return taken

    def add_refs(self, slots: torch.Tensor) -> None:
        self.full_attn_allocator.add_refs(slots)

    def set_full_to_swa_mapping(self, full_indices: torch.Tensor, swa_indices: torch.Tensor) -> None:
        if full_indices.numel():
            self._unpair(full_indices)
            self.full_to_swa_index_mapping[full_indices] = swa_indices
            self.swa_refs.index_put_((swa_indices[swa_indices > 0],), torch.ones((), dtype=torch.int32,
                                     device=self.swa_refs.device), accumulate=True)

    def clear_full_to_swa_mapping(self, full_indices: torch.Tensor) -> None:
        if full_indices.numel():
            self._unpair(full_indices)

    def _unpair(self, full_indices: torch.Tensor) -> torch.Tensor:
        """Forget the SWA peers of ``full_indices``; returns the SWA pages left unpaired."""
        peers = self.full_to_swa_index_mapping[full_indices]
        peers = peers[peers > 0]
        self.full_to_swa_index_mapping[full_indices] = 0
        if peers.numel() == 0:
            return peers
        self.swa_refs.index_put_((peers,), -torch.ones((), dtype=torch.int32, device=peers.device), accumulate=True)
        ps = self.page_size
        pages = _in_order(peers // ps)
        return pages[self.swa_refs.view(-1, ps)[pages].sum(dim=1) == 0] if ps > 1 else pages[self.swa_refs[pages] == 0]

    def free_swa_segment(self, free_index: torch.Tensor) -> None:
        """Free the SWA peers of Full slots (an SWA tombstone, or a request's KV that left its
        window); their Full slots stay."""
        if free_index.numel() == 0:
            return
        peers = self.full_to_swa_index_mapping[free_index]
        if bool((peers <= 0).any()):
            raise PoolError(f"Full slot {int(free_index[peers <= 0][0])} has no SWA peer to free")
        self._free_swa_pages(self._unpair(free_index))

    def _free_swa_pages(self, pages: torch.Tensor) -> None:
        self.swa_attn_allocator.free_page_ids(pages)
        if self.listener is not None and pages.numel():
            ps = self.page_size
            slots = pages if ps == 1 else (pages[:, None] * ps + torch.arange(ps, device=pages.device)).reshape(-1)
            self.listener("swa", slots)

    def release(self, slots: torch.Tensor) -> torch.Tensor:
        """Drop one reference from each Full slot; a slot left with none gives its SWA peer
        back, and the Full pages left with none go back (SGLang's ``free``). Returns those pages."""
        pages, zero = self.full_attn_allocator.release_slots(slots)
        if zero.numel():
            self._free_swa_pages(self._unpair(zero))
        return pages

    def free_segment(self, free_index: torch.Tensor) -> None:
        self.release(free_index)

    free_full_segment = free_segment


class CountedMambaPool(MambaPool):
    """SGLang's Mamba state pool with a count of its changes, for a session's pictures."""

    listener: Listener | None = None

    def clear(self) -> None:
        super().clear()
        self.version = getattr(self, "version", 0) + 1

    def alloc(self, need_size: int) -> torch.Tensor | None:
        taken = super().alloc(need_size)
        self.version += 1
        return taken

    def free(self, free_index: torch.Tensor) -> None:
        super().free(free_index)
        self.version += 1
        if self.listener is not None and free_index.numel():
            self.listener("mamba", free_index.reshape(-1))
