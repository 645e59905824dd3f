"""What the scheduler needs from whatever produces tokens: a fake sampler or the tiny model.

Token ids are ints in ``range(VOCAB_SIZE)`` (one-character tokens map to ``ord``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol
from collections.abc import Sequence

if TYPE_CHECKING:
    import torch

VOCAB_SIZE = 256


class TokenModel(Protocol):
    def extend(self, tokens: Sequence[int], prefix_slots: torch.Tensor, new_slots: torch.Tensor) -> int:
        """Prefill: the KV of ``tokens[:len(prefix_slots)]`` is already in the pool at
        ``prefix_slots``; compute the KV of the remaining tokens into ``new_slots`` (one slot
        per remaining token, in order) and return the next token id."""

    def decode(self, tokens: Sequence[int], slots: torch.Tensor, new_slot: torch.Tensor) -> int:
        """One decode step: ``slots`` hold the KV of ``tokens[:-1]``; compute the KV of the
        last token into ``new_slot`` and return the next token id."""
