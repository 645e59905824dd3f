"""The KV memory: token slots with reference counts, and the request-to-token map."""
from __future__ import annotations

import numpy as np
import torch
from typing import TYPE_CHECKING

from .slot_counts import CHUNK, SlotCounts

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


_lowest, _highest = np.minimum.reduce, np.maximum.reduce


class PoolError(ValueError):
    """A pool call that would break the slot accounting; nothing was changed."""


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """``auto`` is CUDA when torch sees a GPU, otherwise the CPU."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"unknown device {device!r}: use auto, cpu or cuda") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda asked for, but torch sees no GPU (use --device cpu)")
    if resolved.type == "cuda" and (resolved.index or 0) >= torch.cuda.device_count():
        # caught here: torch itself only fails at the first allocation, with a CUDA error
        count = torch.cuda.device_count()
        raise ValueError(f"torch sees {count} GPU(s), numbered 0 to {count - 1}")
    return resolved


def _positive(name: str, n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"{name} must be a positive integer, not {n!r}")
    return n


class TokenToKVPool:
    """``size`` KV slots. Each slot has a reference count: 0 is free; the tree holds one
    reference to each slot it owns, and a running request one to each slot it uses."""

    def __init__(self, size: int, head_num: int = 2, head_dim: int = 16, layer_num: int = 2,
                 dtype: torch.dtype = torch.float32, device: str | torch.device = "auto") -> None:
        self.size = _positive("size", size)
        self.head_num = _positive("head_num", head_num)
        self.head_dim = _positive("head_dim", head_dim)
        self.layer_num = _positive("layer_num", layer_num)
        self.dtype = dtype
        self.device = resolve_device(device)
        self.mem_state = torch.zeros(size, dtype=torch.int32, device=self.device)
        self._one = torch.ones((), dtype=torch.int32, device=self.device)  # a reference, to add or drop
        shape = (size, head_num, head_dim)
        self.k_buffer = [torch.zeros(shape, dtype=dtype, device=self.device) for _ in range(layer_num)]
        self.v_buffer = [torch.zeros(shape, dtype=dtype, device=self.device) for _ in range(layer_num)]
        self._counted: tuple | None = None   # (the last SlotCounts given out, a copy of the counts it holds)
        # the free slots, ascending, kept as they change: the loop asks for the free count and
        # the lowest free slots every pass, and scanning the pool for them cost more than the
        # rest of a long trace's pass together (a 131,072-slot pool: docs/benchmarks.md).
        # Invariant: with the runs freed since the last allocation (``_freed``, merged and sorted
        # when the next allocation needs the lowest), exactly the slots whose count is 0.
        self._free_slots = np.arange(size, dtype=np.int64)
        self._freed: list = []
        self._free_count = size
        # on the CPU the counts are also read and written as numpy, the same memory: a request's
        # few thousand slots cost a few numpy calls where torch's calls cost more than their work
        self._on_cpu = self.device.type == "cpu"
        self._counts = self.mem_state.numpy() if self._on_cpu else np.zeros(0, dtype=np.int32)
        self._marks = np.zeros(size if self._on_cpu else 0, dtype=np.int32)
        self._changes = 0    # numpy's writes, which torch's version counter does not see

    def alloc(self, need_size: int) -> torch.Tensor | None:
        """The ``need_size`` lowest free slots (int64), now referenced once; None if too few."""
        if isinstance(need_size, bool) or not isinstance(need_size, int) or need_size < 0:
            raise PoolError(f"cannot allocate {need_size!r} slots")
        if self._free_count < need_size:
            return None
        free = self._merged_free_slots()
        # a copy: a view would keep the whole free list alive as long as the tree keeps these
        # slots (a pool's worth of int64 per node: most of a big session's memory)
        chosen = free[:need_size].copy()
        self._free_slots = free[need_size:]
        self._free_count -= need_size
        if self._on_cpu:
            self._counts[chosen] = 1   # they were free: one reference each now
            self._changes += 1
            return torch.from_numpy(chosen)
        select = torch.from_numpy(chosen).to(self.device)
        self.mem_state.index_fill_(0, select, 1)
        return select

    def add_refs(self, slots: torch.Tensor | Sequence[int], distinct: bool = False) -> None:
        """One more reference to each slot (a request reusing the tree's KV). ``distinct``: the
        caller vouches that they are this pool's slots, each named once (the tree's own, a
        request's row), so that is not checked."""
        index = self._distinct_index(slots, distinct)
        if index is not None:
            counts = self._counts
            before = counts.take(index)
            if _lowest(before) <= 0:
                raise PoolError(f"slot {int(index[before <= 0].min())} is free: it has no reference to share")
            counts[index] = np.add(before, 1, out=before)
            self._changes += 1
            return
        slots = self._as_slots(slots)
        if slots.shape[0] == 0:
            return
        if int(self.mem_state[slots].min()) <= 0:
            free = slots[self.mem_state[slots] <= 0]
            raise PoolError(f"slot {int(free.min())} is free: it has no reference to share")
        # accumulate: a slot named twice gets two references
        self.mem_state.index_put_((slots,), self._one, accumulate=True)

    def free(self, slots: torch.Tensor | Sequence[int], distinct: bool = False) -> int:
        """Drop one reference from each slot; return how many slots became free (``distinct``
        as for ``add_refs``)."""
        index = self._distinct_index(slots, distinct)
        if index is not None:
            return self._free_distinct(index)
        slots = self._as_slots(slots)
        if slots.shape[0] == 0:
            return 0
        # frees happen every request: steps over the freed slots only, never the whole pool
        state = self.mem_state
        state.index_put_((slots,), -self._one, accumulate=True)
        after = state[slots]
        if int(after.min()) < 0:  # released more often than held: undo, so nothing changed
            state.index_put_((slots,), self._one, accumulate=True)
            raise PoolError(f"slot {int(slots[after < 0].min())} is free: it has no reference "
                            f"to release")
        freed = slots[after == 0]
        if freed.shape[0] == 0:
            return 0
        runs = np.sort(freed.cpu().numpy())
        if len(runs) > 1 and (runs[1:] == runs[:-1]).any():
            runs = np.unique(runs)    # a slot named twice counts once
        # merged into the free list by the next allocation: an eviction frees leaf after
        # leaf, and merging each one cost more than the rest of the pass
        self._freed.append(runs)
        self._free_count += len(runs)
        return len(runs)

    def _distinct_index(self, slots: torch.Tensor | Sequence[int], known: bool) -> np.ndarray | None:
        """``slots`` as a numpy index into the counts, when the pool is on the CPU, they are a
        non-empty 1-D int64 tensor there, inside the pool, and none is named twice (``known``,
        or checked: a slot named twice takes two references, which the torch path counts); else
        None."""
        if not self._on_cpu or slots.__class__ is not torch.Tensor or not slots.shape[0]:
            return None
        if known:   # vouched for: this pool's slots (an int64 tensor on its device), each once
            return slots.numpy()
        if slots.dtype != torch.int64 or slots.dim() != 1 or slots.device.type != "cpu":
            return None
        index = slots.numpy()
        if _lowest(index) < 0 or _highest(index) >= self.size:
            return None     # refused by the torch path, naming the slot
        order = np.arange(len(index), dtype=np.int32)
        marks = self._marks
        marks[index] = order
        return index if np.array_equal(marks[index], order) else None

    def _free_distinct(self, index: np.ndarray) -> int:
        counts = self._counts
        after = counts.take(index)
        low = _lowest(after)
        if low <= 0:   # released more often than held: nothing changed yet
            raise PoolError(f"slot {int(index[after <= 0].min())} is free: it has no reference to release")
        counts[index] = np.subtract(after, 1, out=after)
        self._changes += 1
        if low > 1:     # a request's references to the tree's slots: none becomes free
            return 0
        # a copy either way: ``index`` may be a view of a request's row, rewritten later
        freed = index.copy() if _highest(after) == 0 else index[after == 0]
        self._freed.append(freed)     # merged (sorted) by the next allocation
        self._free_count += len(freed)
        return len(freed)

    def _merged_free_slots(self) -> np.ndarray:
        if self._freed:
            # mostly sorted runs: a stable sort merges them in about linear time
            self._free_slots = np.sort(np.concatenate([self._free_slots, *self._freed]), kind="stable")
            self._freed = []
        return self._free_slots

    def available_size(self) -> int:
        return self._free_count

    def check_free_list(self) -> None:
        """PoolError unless the kept free list is exactly the slots whose count is 0 (it is
        kept as slots change, never rebuilt: this is the check that it was kept right)."""
        scanned = torch.nonzero(self.mem_state == 0).squeeze(1).cpu().numpy()
        kept = self._merged_free_slots()
        if not np.array_equal(scanned, kept) or self._free_count != len(kept):
            raise PoolError(f"the pool's free list holds {len(kept)} slots (counted {self._free_count}) "
                            f"but {len(scanned)} slots have no reference")

    def used_size(self) -> int:
        return self.size - self.available_size()

    def refcounts(self) -> tuple:
        """Every slot's reference count, for views and checks."""
        return tuple(self.mem_state.tolist())

    def picture_version(self) -> tuple[int, int]:
        """Changes whenever a slot's count does (contract.SlotPool): torch bumps a tensor's
        version on every in-place change, and the numpy writes count their own (both only
        grow, so their sum changes when either does); a session reuses its last picture until then."""
        return id(self), self.mem_state._version + self._changes

    def picture(self, previous: Sequence[int] | None = None) -> SlotCounts:
        """``shared_refcounts``: the pool as a session pictures it each step (contract.SlotPool)."""
        return self.shared_refcounts(previous if isinstance(previous, SlotCounts) else None)

    def shared_refcounts(self, previous: SlotCounts | None = None) -> SlotCounts:
        """Every slot's reference count, as ``refcounts()``, sharing with ``previous`` (an
        earlier picture of this pool) every chunk of slots that has not changed since.

        When ``previous`` is the last picture this pool gave, the changed slots are found by
        comparing tensors, so only their chunks are read out (a pool of 100,000 slots costs
        the handful of slots a step changed, not a walk over all of them)."""
        state, counted = self.mem_state, self._counted
        if previous is not None and counted is not None and counted[0] is previous:
            changed = torch.nonzero(state != counted[1]).squeeze(1)
            numbers = sorted(set((changed // CHUNK).tolist()))
            counts = SlotCounts.replacing(previous, {
                n: tuple(state[n * CHUNK:(n + 1) * CHUNK].tolist()) for n in numbers})
            counted[1].copy_(state)
        else:
            counts = SlotCounts(state.tolist(), previous)
            counted = (None, state.clone())
        self._counted = (counts, counted[1])
        return counts

    def get_key_buffer(self, layer: int) -> torch.Tensor:
        return self.k_buffer[layer]

    def get_value_buffer(self, layer: int) -> torch.Tensor:
        return self.v_buffer[layer]

    def _as_slots(self, slots: torch.Tensor | Sequence[int]) -> torch.Tensor:
        """``slots`` as a 1-D int64 tensor on this device, or PoolError before any change."""
        if not isinstance(slots, torch.Tensor):
            slots = torch.tensor(list(slots), dtype=torch.int64)
        if slots.dim() != 1 or slots.is_floating_point():
            raise PoolError("slot indices must be a 1-D integer tensor")
        slots = slots.to(device=self.device, dtype=torch.int64)
        if slots.shape[0]:
            low, high = (int(x) for x in torch.aminmax(slots))
            if low < 0 or high >= self.size:
                raise PoolError(f"slot {low if low < 0 else high} is outside the pool (0..{self.size - 1})")
        return slots

    def __repr__(self) -> str:
        return f"TokenToKVPool(size={self.size}, free={self.available_size()}, device={self.device})"


class ReqToTokenPool:
    """Request slots: row ``r`` lists, position by position, the KV slots request ``r`` uses."""

    def __init__(self, size: int, max_context_len: int, device: str | torch.device = "auto") -> None:
        self.size = _positive("size", size)
        self.max_context_len = _positive("max_context_len", max_context_len)
        self.device = resolve_device(device)
        self.mem_state = torch.ones(size, dtype=torch.bool, device=self.device)  # True = free
        self.req_to_token = torch.zeros((size, max_context_len), dtype=torch.int64, device=self.device)

    def alloc(self, need_size: int = 1) -> list | None:
        """``need_size`` free request slots, or None when too few are left."""
        select = torch.nonzero(self.mem_state).squeeze(1)[:need_size]
        if select.shape[0] < need_size:
            return None
        self.mem_state[select] = False
        return select.tolist()

    def free(self, index: int | Iterable[int]) -> None:
        indices = [index] if isinstance(index, int) else list(index)
        for i in indices:
            if not 0 <= i < self.size or bool(self.mem_state[i]):
                raise PoolError(f"request slot {i} is not in use")
        self.mem_state[indices] = True

    def available_size(self) -> int:
        return int(self.mem_state.sum())
