"""Slot values handed to insert: checked and converted before anything changes (both engines)."""
from __future__ import annotations

import torch
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


def as_value(key: tuple, value: torch.Tensor | Sequence[int] | None, device: str | torch.device,
             shorter_ok: bool = False) -> torch.Tensor:
    """``value`` as a 1-D int64 tensor with one slot per token of ``key`` (None: the token ids,
    as both releases store them when no slots are given). ``shorter_ok`` also accepts a value
    shorter than its key, as the first release's scheduler passed one (#4, ``strict=False``)."""
    if value is None:
        try:
            value = [t if isinstance(t, int) else ord(t) for t in key]
        except TypeError:
            raise TypeError("insert() without value needs int or one-character tokens") from None
    if not isinstance(value, torch.Tensor):
        value = torch.tensor(list(value), dtype=torch.int64, device=device)
    length = value.shape[0] if value.dim() == 1 else -1
    if length != len(key) and not (shorter_ok and 0 <= length < len(key)):
        raise ValueError(f"value must be 1-D with one slot per token: {len(key)} tokens, "
                         f"value of shape {tuple(value.shape)}")
    if value.dtype != torch.int64:
        if value.is_floating_point():
            raise TypeError("slot indices must be integers")
        value = value.to(torch.int64)
    return value
