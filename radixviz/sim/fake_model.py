"""The default token source: a seeded, deterministic stand-in for a model.

It computes no KV (the slots stay as the pool holds them); it only decides the next token
from the seed and the sequence so far, so the same run always generates the same text.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Sequence

from .model_api import VOCAB_SIZE

if TYPE_CHECKING:
    import torch

_MASK = (1 << 64) - 1


def _mix(x: int) -> int:
    # splitmix64 finaliser: cheap, and every input bit moves every output bit
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & _MASK
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & _MASK
    return x ^ (x >> 31)


def _token_id(token) -> int:
    # a one-character token is its code point, as for the tiny model
    return ord(token) if isinstance(token, str) else token


class FakeSampler:
    """A TokenModel whose next token depends on (seed, length, last two tokens)."""

    def __init__(self, seed: int = 0):
        self.seed = seed

    def _next(self, tokens: Sequence[int]) -> int:
        last = _token_id(tokens[-1]) if tokens else 0
        before = _token_id(tokens[-2]) if len(tokens) > 1 else 0
        x = _mix((self.seed & _MASK) ^ (len(tokens) << 16) ^ (last << 8) ^ before)
        return x % VOCAB_SIZE

    def extend(self, tokens: Sequence[int], prefix_slots: torch.Tensor, new_slots: torch.Tensor) -> int:
        # shape[0], not len(): len() of a tensor is slow and decode runs once per token
        if new_slots.shape[0] != len(tokens) - prefix_slots.shape[0]:
            raise ValueError(f"{len(tokens)} tokens, {prefix_slots.shape[0]} cached: need "
                             f"{len(tokens) - prefix_slots.shape[0]} new slots, got {new_slots.shape[0]}")
        return self._next(tokens)

    def decode(self, tokens: Sequence[int], slots: torch.Tensor, new_slot: torch.Tensor) -> int:
        if slots.shape[0] != len(tokens) - 1:
            raise ValueError(f"decode: {len(tokens)} tokens need {len(tokens) - 1} cached slots, "
                             f"got {slots.shape[0]}")
        return self._next(tokens)
