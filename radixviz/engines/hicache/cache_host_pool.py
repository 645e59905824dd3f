"""The host tier's KV memory: SGLang's ``HostKVCache`` (``memory_pool_host.py``) in small.

Slots are handed out from a queue of free ones, as SGLang's host pool does: ``alloc`` takes
the front of ``free_slots`` and ``free`` appends at the back, so a freed slot is reused only
after every slot freed before it (the device pool, by contrast, hands out its lowest free
slots). The K and V buffers are real tensors shaped like the device pool's, one per layer;
beside a CUDA device pool they live in pinned memory, so copies can run asynchronously.
"""
from __future__ import annotations

import torch
from typing import TYPE_CHECKING

from radixviz.cache.options import HOST_TO_DEVICE_RATIO   # declared with the host_size option

if TYPE_CHECKING:
    from radixviz.cache.pool import TokenToKVPool


def default_host_size(device_size: int, page_size: int = 1, ratio: float = HOST_TO_DEVICE_RATIO) -> int:
    """The host pool's size when none is given: ``ratio`` times the device pool, then aligned
    up to whole pages the way SGLang does it (one page more than the pages that fit)."""
    size = int(device_size * ratio)
    return (size // page_size + 1) * page_size


class TokenToKVPoolHost:
    """``size`` host slots of K and V for every layer of ``device_pool``.

    ``free_slots`` is the queue of free slots (a 1-D int64 tensor); a slot not in it belongs
    to exactly one tree node's ``host_value``. ``version`` counts changes, so a view can
    reuse its last picture until the pool changes.
    """

    def __init__(self, device_pool: TokenToKVPool, size: int, page_size: int = 1):
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError(f"host size must be a positive number of tokens, not {size!r}")
        if size % page_size:
            raise ValueError(f"host size {size} is not whole pages of {page_size}")
        self.size, self.page_size = size, page_size
        self.layer_num = device_pool.layer_num
        self.device = torch.device("cpu")
        # pinned memory lets the GPU copy to and from it without a staging step on its side
        self.pin_memory = device_pool.device.type == "cuda"
        shape = (size, device_pool.head_num, device_pool.head_dim)
        self.k_buffer = [torch.zeros(shape, dtype=device_pool.dtype, pin_memory=self.pin_memory)
                         for _ in range(self.layer_num)]
        self.v_buffer = [torch.zeros(shape, dtype=device_pool.dtype, pin_memory=self.pin_memory)
                         for _ in range(self.layer_num)]
        self.version = 0
        self.watch_double_free = False
        self.clear()

    def clear(self) -> None:
        """Every slot free again, in order."""
        self.free_slots = torch.arange(self.size, dtype=torch.int64)
        self.double_freed: list = []   # slots freed while already free, oldest first
        self.version += 1

    def available_size(self) -> int:
        return len(self.free_slots)

    def used_size(self) -> int:
        return self.size - self.available_size()

    def alloc(self, need_size: int) -> torch.Tensor | None:
        """The first ``need_size`` free slots (whole pages), or None when too few are free."""
        if need_size % self.page_size:
            raise ValueError(f"host alloc of {need_size} tokens: not whole pages of {self.page_size}")
        if need_size > self.available_size():
            return None
        select_index = self.free_slots[:need_size]
        self.free_slots = self.free_slots[need_size:]
        self.version += 1
        return select_index

    def free(self, indices: torch.Tensor) -> int:
        """Put ``indices`` back at the end of the free queue; return how many.

        A slot that is already free goes in again, as in SGLang's pool, so the queue then
        holds it twice and two later allocations can both get it; it is recorded in
        ``double_freed`` (only the 9fbe6800a bugs, cache_head_bugs.py, ever do this)."""
        indices = indices.to(torch.int64).cpu()
        if self.watch_double_free:   # set by the cache while a head bug is on (costs a set)
            free_now = set(self.free_slots.tolist())
            for slot in indices.tolist():
                if slot in free_now:
                    self.double_freed.append(slot)
                free_now.add(slot)
        self.free_slots = torch.cat([self.free_slots, indices])
        self.version += 1
        return len(indices)

    def accounting(self) -> str:
        """One line on broken slot accounting ('' when sound): slots freed twice, and how
        many entries the free queue holds for how many distinct free slots."""
        if not self.double_freed:
            return ""
        entries, distinct = len(self.free_slots), len(set(self.free_slots.tolist()))
        slots = ", ".join(str(s) for s in sorted(set(self.double_freed)))
        return (f"host pool broken: slot(s) {slots} freed twice; the free queue holds {entries} "
                f"entries for {distinct} free slots, so one slot can go to two nodes")

    def picture_version(self) -> tuple[int, int]:
        """Changes whenever a slot does (contract.SlotPool): a view's picture is reused until then."""
        return id(self), self.version

    def picture(self, previous: object = None) -> tuple:
        """``states()``: the host pool as a session pictures it each step (contract.SlotPool)."""
        return self.states()

    def states(self) -> tuple:
        """Per slot: 0 free, 1 in use, 2 in the free queue more than once (for views)."""
        used = torch.ones(self.size, dtype=torch.int8)
        used[self.free_slots] = 0
        if len(self.free_slots) > len(set(self.free_slots.tolist())):
            counts = torch.bincount(self.free_slots, minlength=self.size)
            used[counts > 1] = 2
        return tuple(used.tolist())

    # ----------------------------------------------------------- the copies themselves

    def backup_from_device_all_layer(self, device_pool: TokenToKVPool, host_indices: torch.Tensor,
                                     device_indices: torch.Tensor) -> None:
        """Copy the K and V of ``device_indices`` into ``host_indices``, every layer (CPU pools:
        at once; a CUDA pool stages through ``stage_from_device`` instead)."""
        for layer in range(self.layer_num):
            self.k_buffer[layer].index_copy_(0, host_indices, device_pool.k_buffer[layer].index_select(0, device_indices))
            self.v_buffer[layer].index_copy_(0, host_indices, device_pool.v_buffer[layer].index_select(0, device_indices))

    def load_to_device_per_layer(self, device_pool: TokenToKVPool, host_indices: torch.Tensor,
                                 device_indices: torch.Tensor, layer: int) -> None:
        """Copy layer ``layer``'s K and V of ``host_indices`` into the device pool's
        ``device_indices`` (on a CUDA pool, asynchronously on the current stream)."""
        if device_pool.device.type == "cuda":
            device_indices = device_indices.to(device_pool.device, non_blocking=True)
            for host, device in ((self.k_buffer, device_pool.k_buffer), (self.v_buffer, device_pool.v_buffer)):
                staged = host[layer].index_select(0, host_indices).pin_memory()
                device[layer].index_copy_(0, device_indices, staged.to(device_pool.device, non_blocking=True))
            return
        device_pool.k_buffer[layer].index_copy_(0, device_indices, self.k_buffer[layer].index_select(0, host_indices))
        device_pool.v_buffer[layer].index_copy_(0, device_indices, self.v_buffer[layer].index_select(0, host_indices))

    def stage_from_device(self, device_pool: TokenToKVPool, device_indices: torch.Tensor):
        """CUDA pools: the rows of ``device_indices`` copied into fresh pinned tensors, queued on
        the current stream; ``scatter_staged`` files them once the copy is known to be done."""
        staged = []
        for layer in range(self.layer_num):
            for device in (device_pool.k_buffer, device_pool.v_buffer):
                rows = device[layer].index_select(0, device_indices)
                target = torch.empty(rows.shape, dtype=rows.dtype, pin_memory=True)
                target.copy_(rows, non_blocking=True)
                staged.append(target)
        return staged

    def scatter_staged(self, staged: list[torch.Tensor], host_indices: torch.Tensor) -> None:
        """File rows staged by ``stage_from_device`` at ``host_indices`` (after the copy ended)."""
        for layer in range(self.layer_num):
            self.k_buffer[layer].index_copy_(0, host_indices, staged[2 * layer])
            self.v_buffer[layer].index_copy_(0, host_indices, staged[2 * layer + 1])

    def __repr__(self) -> str:
        return f"TokenToKVPoolHost(size={self.size}, free={self.available_size()}, pinned={self.pin_memory})"
