"""Argument checks of the 2026 engine, done before anything changes."""
from __future__ import annotations

import torch


def as_value(key: tuple, value, device) -> torch.Tensor:
    """``value`` as a 1-D int64 tensor with one slot per token of ``key`` (None: the token ids,
    as SGLang stores them when no slots are given)."""
    if value is None:
        try:
            value = [t if isinstance(t, int) else ord(t) for t in key]
        except TypeError:
            raise TypeError("insert() without value needs int or one-character tokens") from None
    if not isinstance(value, torch.Tensor):
        value = torch.tensor(list(value), dtype=torch.int64, device=device)
    if value.dim() != 1 or value.shape[0] != len(key):
        raise ValueError(f"value must be 1-D with one slot per token: {len(key)} tokens, "
                         f"value of shape {tuple(value.shape)}")
    if value.dtype != torch.int64:
        if value.is_floating_point():
            raise TypeError("slot indices must be integers")
        value = value.to(torch.int64)
    return value


def check_attached(cache, node, releasing: bool = False) -> None:
    """Refuse a node not in ``cache``'s tree, or (``releasing``) an unlock below zero."""
    current = node
    while current is not cache.root_node:
        parent = current.parent
        if parent is None or not current.key \
                or parent.children.get(cache._child_key(current.key, 0)) is not current:
            raise ValueError(f"node #{node.id} is not in this tree (evicted, or from another cache)")
        if releasing and current.lock_ref <= 0:
            raise ValueError(f"node #{current.id} holds no lock to release")
        current = parent
