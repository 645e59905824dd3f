"""What the scheduler needs from whatever produces tokens: a fake sampler or the tiny model.

Token ids are ints in ``range(VOCAB_SIZE)`` (one-character tokens map to ``ord``).
"""
from __future__ import annotations

from typing import Protocol
from collections.abc import Sequence

VOCAB_SIZE = 256


class TokenModel(Protocol):
    def extend(self, tokens: Sequence[int], prefix_slots, new_slots) -> int:
        """Prefill: the KV of ``tokens[:len(prefix_slots)]`` is already in the pool at
        ``prefix_slots``; compute the KV of the remaining tokens into ``new_slots`` (one slot
        per remaining token, in order) and return the next token id."""

    def decode(self, tokens: Sequence[int], slots, new_slot) -> int:
        """One decode step: ``slots`` hold the KV of ``tokens[:-1]``; compute the KV of the
        last token into ``new_slot`` and return the next token id."""
