"""The unified cache's memory: the Full KV pool, the sliding-window KV pool paired with it,
and the Mamba state pool. Free lists as v0.5.23 keeps them (``mem_cache/allocator/token.py``,
``paged.py``, ``swa.py``, ``mamba.py``), so slot numbers come out as SGLang's would:

- slot (or page) 0 is the padding slot, never handed out; the rest start in order;
- with one token a page a freed slot goes to the back of the free list; with pages, a freed
  page goes to the front (SGLang's paged allocator without ``need_sort``);
- the SWA pool has its own free list; ``full_to_swa_index_mapping`` pairs each Full slot with
  its SWA peer (0: none), and an SWA free follows the mapping from the Full slots it is given;
- a Mamba slot holds one state (a small real tensor here: the tests check a copy is a copy).

Left out: free groups, the per-request SWA ring, the unified (virtual-page) pools, int8
checkpoints and the ping-pong track buffer.
"""
from __future__ import annotations

import torch

from ...cache.pool import PoolError

STATE_DIM = 4  # numbers in a radixviz Mamba state: enough to tell two states apart


def _page_ids_first_of_page(indices: torch.Tensor, page_size: int) -> torch.Tensor:
    # a segment starts on a page and runs through whole pages: its first slot of each page
    return indices[::page_size] // page_size


class TokenToKVPoolAllocator:
    """Slots ``1..size`` handed out ``page_size`` at a time (whole pages)."""

    def __init__(self, size: int, page_size: int = 1, device: str | torch.device = "cpu") -> None:
        if size < page_size:
            raise ValueError(f"a pool of {size} slots holds no page of {page_size}")
        self.size = size
        self.page_size = page_size
        self.device = torch.device(device)
        self.num_pages = size // page_size
        self.clear()

    def clear(self) -> None:
        self.free_pages = torch.arange(1, self.num_pages + 1, dtype=torch.int64, device=self.device)

    def available_size(self) -> int:
        return len(self.free_pages) * self.page_size

    def alloc(self, need_size: int) -> torch.Tensor | None:
        """The first ``need_size`` slots of the next free pages (a partial last page is taken
        whole), or None when too few pages are free."""
        ps = self.page_size
        num_pages = -(-need_size // ps)
        if num_pages > len(self.free_pages):
            return None
        out_pages = self.free_pages[:num_pages]
        self.free_pages = self.free_pages[num_pages:]
        if ps == 1:
            return out_pages.clone()
        slots = (out_pages[:, None] * ps + torch.arange(ps, device=self.device)).reshape(-1)
        return slots[:need_size]

    def free_page_ids(self, page_ids: torch.Tensor) -> None:
        if page_ids.numel() == 0:
            return
        if self.page_size == 1:
            self.free_pages = torch.cat((self.free_pages, page_ids))
        else:
            self.free_pages = torch.cat((page_ids, self.free_pages))

    def free_segment(self, free_index: torch.Tensor) -> None:
        """Free the pages of a run of slots that starts on a page boundary."""
        if free_index.numel() == 0:
            return
        self.free_page_ids(_page_ids_first_of_page(free_index, self.page_size))

    # a pool with no SWA peer: every free is a Full free
    free_full_segment = free_segment

    def full_available_size(self) -> int:
        return self.available_size()

    def free_slots(self) -> tuple:
        """Every free slot, for views and checks."""
        ps = self.page_size
        pages = self.free_pages.tolist()
        return tuple(p * ps + i for p in pages for i in range(ps)) if ps > 1 else tuple(pages)


class SWATokenToKVPoolAllocator:
    """A Full pool and an SWA pool, allocated together and paired slot by slot."""

    def __init__(self, size: int, size_swa: int, page_size: int = 1,
                 device: str | torch.device = "cpu") -> None:
        self.page_size = page_size
        self.full_attn_allocator = TokenToKVPoolAllocator(size, page_size, device)
        self.swa_attn_allocator = TokenToKVPoolAllocator(size_swa, page_size, device)
        # one entry per Full slot (and a page of padding); 0 means "no SWA peer"
        self.full_to_swa_index_mapping = torch.zeros(size + page_size + 1, dtype=torch.int64,
                                                     device=self.full_attn_allocator.device)

    def clear(self) -> None:
        self.full_attn_allocator.clear()
        self.swa_attn_allocator.clear()
        self.full_to_swa_index_mapping.zero_()

    def available_size(self) -> int:
        return min(self.full_available_size(), self.swa_available_size())

    def full_available_size(self) -> int:
        return self.full_attn_allocator.available_size()

    def swa_available_size(self) -> int:
        return self.swa_attn_allocator.available_size()

    def alloc(self, need_size: int) -> torch.Tensor | None:
        """Full slots, each with a fresh SWA peer; None when either pool is short."""
        ps = self.page_size
        aligned = -(-need_size // ps) * ps
        if aligned > self.full_available_size() or aligned > self.swa_available_size():
            return None
        full = self.full_attn_allocator.alloc(aligned)
        swa = self.swa_attn_allocator.alloc(aligned)
        assert full is not None and swa is not None
        self.full_to_swa_index_mapping[full] = swa
        return full[:need_size]

    def translate_loc_from_full_to_swa(self, full_indices: torch.Tensor) -> torch.Tensor:
        return self.full_to_swa_index_mapping[full_indices]

    def set_full_to_swa_mapping(self, full_indices: torch.Tensor, swa_indices: torch.Tensor) -> None:
        if full_indices.numel():
            self.full_to_swa_index_mapping[full_indices] = swa_indices

    def clear_full_to_swa_mapping(self, full_indices: torch.Tensor) -> None:
        if full_indices.numel():
            self.full_to_swa_index_mapping.index_fill_(0, full_indices, 0)

    def free_swa_segment(self, free_index: torch.Tensor) -> None:
        """Free the SWA peers of a run of Full slots and clear their pairing."""
        if free_index.numel() == 0:
            return
        ps = self.page_size
        reps = free_index[::ps]
        swa_tokens = self.full_to_swa_index_mapping[reps]
        if bool((swa_tokens <= 0).any()):
            raise PoolError(f"Full slot {int(reps[swa_tokens <= 0][0])} has no SWA peer to free")
        if ps == 1:
            swa_pages, mapping_indices = swa_tokens, reps
        else:
            swa_pages = swa_tokens // ps
            base = (reps // ps) * ps
            mapping_indices = (base[:, None] + torch.arange(ps, device=base.device)).reshape(-1)
        self.clear_full_to_swa_mapping(mapping_indices)
        self.swa_attn_allocator.free_page_ids(swa_pages)

    def free_segment(self, free_index: torch.Tensor) -> None:
        """Free Full slots and their SWA peers (the SWA side first: it reads the mapping)."""
        if free_index.numel() == 0:
            return
        self.free_swa_segment(free_index)
        self.full_attn_allocator.free_segment(free_index)

    def free_full_segment(self, free_index: torch.Tensor) -> None:
        """Free Full slots whose SWA peers are gone already."""
        if free_index.numel() == 0:
            return
        if bool((self.full_to_swa_index_mapping[free_index] != 0).any()):
            raise PoolError("a Full slot freed alone still has an SWA peer")
        self.full_attn_allocator.free_segment(free_index)


class MambaPool:
    """State slots ``1..size``; ``states[slot]`` is the state a slot holds."""

    def __init__(self, size: int, device: str | torch.device = "cpu") -> None:
        self.size = size
        self.device = torch.device(device)
        self.states = torch.zeros((size + 1, STATE_DIM), dtype=torch.float32, device=self.device)
        self.clear()

    def clear(self) -> None:
        self.free_slots = torch.arange(1, self.size + 1, dtype=torch.int64, device=self.device)
        self.states.zero_()

    def available_size(self) -> int:
        return len(self.free_slots)

    def alloc(self, need_size: int) -> torch.Tensor | None:
        if need_size > len(self.free_slots):
            return None
        select = self.free_slots[:need_size]
        self.free_slots = self.free_slots[need_size:]
        return select

    def free(self, free_index: torch.Tensor) -> None:
        if free_index.numel() == 0:
            return
        self.free_slots = torch.cat((self.free_slots, free_index.reshape(-1)))

    def copy_from(self, src_index: torch.Tensor, dst_index: torch.Tensor) -> None:
        """The copy-on-write: ``dst`` becomes an independent copy of ``src``'s state."""
        self.states[dst_index.reshape(-1)] = self.states[src_index.reshape(-1)]
