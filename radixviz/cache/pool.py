"""The KV memory: token slots with reference counts, and the request-to-token map."""
from __future__ import annotations

import torch


class PoolError(ValueError):
    """A pool call that would break the slot accounting; nothing was changed."""


def resolve_device(device="auto") -> torch.device:
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


def _positive(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"{name} must be a positive integer, not {n!r}")
    return n


class TokenToKVPool:
    """``size`` KV slots. Each slot has a reference count: 0 is free; the tree holds one
    reference to each slot it owns, and a running request one to each slot it uses."""

    def __init__(self, size: int, head_num: int = 2, head_dim: int = 16, layer_num: int = 2,
                 dtype=torch.float32, device="auto"):
        self.size = _positive("size", size)
        self.head_num = _positive("head_num", head_num)
        self.head_dim = _positive("head_dim", head_dim)
        self.layer_num = _positive("layer_num", layer_num)
        self.dtype = dtype
        self.device = resolve_device(device)
        self.mem_state = torch.zeros(size, dtype=torch.int32, device=self.device)
        shape = (size, head_num, head_dim)
        self.k_buffer = [torch.zeros(shape, dtype=dtype, device=self.device) for _ in range(layer_num)]
        self.v_buffer = [torch.zeros(shape, dtype=dtype, device=self.device) for _ in range(layer_num)]

    def alloc(self, need_size: int) -> torch.Tensor | None:
        """The ``need_size`` lowest free slots (int64), now referenced once; None if too few."""
        if isinstance(need_size, bool) or not isinstance(need_size, int) or need_size < 0:
            raise PoolError(f"cannot allocate {need_size!r} slots")
        select = torch.nonzero(self.mem_state == 0).squeeze(1)[:need_size]
        if select.shape[0] < need_size:
            return None
        self.mem_state[select] += 1
        return select.to(torch.int64)

    def add_refs(self, slots) -> None:
        """One more reference to each slot (a request reusing the tree's KV)."""
        slots, _ = self._checked(slots, must_be_held=True)
        self.mem_state.index_add_(0, slots, torch.ones_like(slots, dtype=torch.int32))

    def free(self, slots) -> int:
        """Drop one reference from each slot; return how many slots became free."""
        slots, distinct = self._checked(slots, must_be_held=True, releasing=True)
        if len(slots) == 0:
            return 0
        self.mem_state.index_add_(0, slots, torch.full_like(slots, -1, dtype=torch.int32))
        return int((self.mem_state[distinct] == 0).sum())

    def available_size(self) -> int:
        return self.size - int(torch.count_nonzero(self.mem_state))

    def used_size(self) -> int:
        return self.size - self.available_size()

    def refcounts(self) -> tuple:
        """Every slot's reference count, for views and checks."""
        return tuple(self.mem_state.tolist())

    def get_key_buffer(self, layer: int) -> torch.Tensor:
        return self.k_buffer[layer]

    def get_value_buffer(self, layer: int) -> torch.Tensor:
        return self.v_buffer[layer]

    def _checked(self, slots, must_be_held: bool, releasing: bool = False):
        """``(slots, distinct slots)`` as int64 on this device, or PoolError before any change."""
        if not isinstance(slots, torch.Tensor):
            slots = torch.tensor(list(slots), dtype=torch.int64)
        if slots.dim() != 1 or slots.is_floating_point():
            raise PoolError("slot indices must be a 1-D integer tensor")
        slots = slots.to(device=self.device, dtype=torch.int64)
        if len(slots) == 0:
            return slots, slots
        low, high = (int(x) for x in torch.aminmax(slots))
        if low < 0 or high >= self.size:
            raise PoolError(f"slot {low if low < 0 else high} is outside the pool (0..{self.size - 1})")
        # work on the slots named, not the whole pool: frees and shares happen every request
        distinct, uses = torch.unique(slots, return_counts=True)  # sorted: lowest culprit first
        if must_be_held:
            # releasing needs one reference per use; sharing needs the slot to be in use
            short = distinct[self.mem_state[distinct] < (uses if releasing else 1)]
            if len(short):
                raise PoolError(f"slot {int(short[0])} is free: it has no reference to "
                                f"{'release' if releasing else 'share'}")
        return slots, distinct

    def __repr__(self) -> str:
        return f"TokenToKVPool(size={self.size}, free={self.available_size()}, device={self.device})"


class ReqToTokenPool:
    """Request slots: row ``r`` lists, position by position, the KV slots request ``r`` uses."""

    def __init__(self, size: int, max_context_len: int, device="auto"):
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

    def free(self, index) -> None:
        indices = [index] if isinstance(index, int) else list(index)
        for i in indices:
            if not 0 <= i < self.size or bool(self.mem_state[i]):
                raise PoolError(f"request slot {i} is not in use")
        self.mem_state[indices] = True

    def available_size(self) -> int:
        return int(self.mem_state.sum())
