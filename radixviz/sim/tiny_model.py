"""A tiny deterministic transformer whose keys and values live in the KV pool.

Reusing a cached prefix here really is reusing its K/V: ``extend`` reads the prefix's
K/V from the pool by slot index and computes only the tokens after it, the way SGLang's
prefill does. If a matcher hands back the wrong slots, the numbers come out wrong.

The shapes match ``TokenToKVPool``'s defaults (2 layers, 2 heads, head dim 16); the
vocabulary is 256 byte tokens, a one-character token being ``ord(c)``. Weights are drawn
on the CPU from a seeded generator, so every device gets the same model.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import math
from dataclasses import dataclass
from collections.abc import Sequence

import torch

from radixviz.sim.model_api import VOCAB_SIZE

if TYPE_CHECKING:
    from typing import Any

    from radixviz.cache import TokenToKVPool


ROPE_BASE = 10000.0


@dataclass(frozen=True)
class Forward:
    """What one forward pass over some tokens produced.

    ``keys``/``values`` hold, per layer, a ``(n, heads, head_dim)`` tensor for the ``n``
    tokens computed (keys already rotated for their positions, as a KV cache stores them);
    ``logits`` is the ``(vocab,)`` next-token distribution after the last token.
    """
    keys: list
    values: list
    logits: torch.Tensor


def token_ids(key: Sequence[Any]) -> list[int]:
    """The model's token ids for a key: a character is ``ord(c)``, an int is itself.

    Raises ValueError for a token outside the 256-token vocabulary.
    """
    ids = []
    for pos, tok in enumerate(key):
        tid = ord(tok) if isinstance(tok, str) and len(tok) == 1 else tok
        if isinstance(tid, bool) or not isinstance(tid, int) or not 0 <= tid < VOCAB_SIZE:
            raise ValueError(f"token {tok!r} at position {pos} is outside the model's "
                             f"vocabulary (one byte: characters U+0000..U+00FF or ids 0..255)")
        ids.append(tid)
    return ids


def _rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight


class TinyModel:
    """A 2-layer pre-norm transformer with rotary positions, bound to one ``TokenToKVPool``.

    Implements the ``TokenModel`` protocol (``extend``/``decode``); ``last_logits`` holds
    the logits behind the token the last call returned.
    """

    def __init__(self, pool: TokenToKVPool, seed: int = 0, mlp_ratio: int = 4):
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise ValueError(f"seed must be an integer from 0 to 2**63-1, not {seed!r}")
        self.pool = pool
        self.seed = seed
        self.device = pool.device
        self.dtype = pool.dtype
        self.layers, self.heads, self.head_dim = pool.layer_num, pool.head_num, pool.head_dim
        if self.head_dim % 2:
            raise ValueError("rotary positions need an even head_dim")
        self.width = self.heads * self.head_dim
        gen = torch.Generator().manual_seed(seed)

        def weight(*shape: int, scale: float | None = None):
            scale = scale if scale is not None else 1.0 / math.sqrt(shape[0])
            return (torch.randn(*shape, generator=gen) * scale).to(self.device, self.dtype)

        w, hidden = self.width, self.width * mlp_ratio
        self.embed = weight(VOCAB_SIZE, w, scale=1.0)
        self.blocks = [dict(norm1=torch.ones(w, device=self.device, dtype=self.dtype),
                            wq=weight(w, w), wk=weight(w, w), wv=weight(w, w), wo=weight(w, w),
                            norm2=torch.ones(w, device=self.device, dtype=self.dtype),
                            up=weight(w, hidden), down=weight(hidden, w))
                       for _ in range(self.layers)]
        self.final_norm = torch.ones(w, device=self.device, dtype=self.dtype)
        self.unembed = weight(w, VOCAB_SIZE)
        half = self.head_dim // 2
        self._inv_freq = 1.0 / (ROPE_BASE ** (torch.arange(half, dtype=torch.float64) / half))
        self.last_logits: torch.Tensor | None = None

    # ------------------------------------------------------------ pure computation

    @torch.no_grad()
    def forward(self, ids: Sequence[int], past_keys=None, past_values=None) -> Forward:
        """Run ``ids`` after a past whose per-layer K/V are given (None: no past).

        The new tokens sit at positions ``len(past)..``; each attends causally to the past
        and to the new tokens up to itself. Touches no pool.
        """
        start = 0 if past_keys is None else int(past_keys[0].shape[0])
        n = len(ids)
        if n == 0:
            raise ValueError("forward needs at least one new token")
        x = self.embed[torch.as_tensor(list(ids), dtype=torch.int64, device=self.device)]
        cos, sin = self._rotary(start, n)
        # new token i (position start+i) may see every position <= start+i
        visible = (torch.arange(start + n, device=self.device)[None, :]
                   <= torch.arange(start, start + n, device=self.device)[:, None])
        keys, values = [], []
        for layer, b in enumerate(self.blocks):
            h = _rms_norm(x, b["norm1"])
            q = self._rotate((h @ b["wq"]).view(n, self.heads, self.head_dim), cos, sin)
            k = self._rotate((h @ b["wk"]).view(n, self.heads, self.head_dim), cos, sin)
            v = (h @ b["wv"]).view(n, self.heads, self.head_dim)
            keys.append(k)
            values.append(v)
            if start:
                k = torch.cat([past_keys[layer].to(self.dtype), k])
                v = torch.cat([past_values[layer].to(self.dtype), v])
            scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(self.head_dim)
            scores = scores.masked_fill(~visible, float("-inf"))
            attn = torch.einsum("hqk,khd->qhd", scores.softmax(-1), v).reshape(n, self.width)
            x = x + attn @ b["wo"]
            x = x + torch.nn.functional.gelu(_rms_norm(x, b["norm2"]) @ b["up"]) @ b["down"]
        logits = _rms_norm(x[-1], self.final_norm) @ self.unembed
        return Forward(keys, values, logits)

    def from_scratch(self, ids: Sequence[int]) -> Forward:
        """All of ``ids`` computed with no cache: the reference a reuse is checked against."""
        return self.forward(ids)

    def _rotary(self, start: int, n: int):
        pos = torch.arange(start, start + n, dtype=torch.float64)
        angles = pos[:, None] * self._inv_freq[None, :]
        # computed in float64 then cast, so a position's angle never depends on the batch
        return (angles.cos().to(self.device, self.dtype)[:, None, :],
                angles.sin().to(self.device, self.dtype)[:, None, :])

    @staticmethod
    def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        a, b = x.chunk(2, dim=-1)
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)

    # ------------------------------------------------------------ pool-backed calls

    def gather(self, slots) -> tuple[list, list]:
        """The per-layer K/V stored at ``slots``, in slot order."""
        idx = self._slots(slots)
        return ([self.pool.k_buffer[i][idx] for i in range(self.layers)],
                [self.pool.v_buffer[i][idx] for i in range(self.layers)])

    def extend(self, tokens: Sequence, prefix_slots: torch.Tensor, new_slots: torch.Tensor) -> int:
        """Prefill: reuse the K/V at ``prefix_slots`` for the first tokens, compute the rest
        into ``new_slots``; return the argmax next token."""
        ids = token_ids(tokens)
        prefix, new = self._slots(prefix_slots), self._slots(new_slots)
        if len(prefix) + len(new) != len(ids) or len(new) == 0:
            raise ValueError(f"extend needs one new slot per token after the prefix: {len(ids)} "
                             f"tokens, {len(prefix)} prefix slots, {len(new)} new slots")
        past = self.gather(prefix) if len(prefix) else (None, None)
        out = self.forward(ids[len(prefix):], *past)
        for i in range(self.layers):
            self.pool.k_buffer[i][new] = out.keys[i]
            self.pool.v_buffer[i][new] = out.values[i]
        self.last_logits = out.logits
        return int(out.logits.argmax())

    def decode(self, tokens: Sequence, slots, new_slot: torch.Tensor) -> int:
        """One decode step: ``slots`` hold the K/V of ``tokens[:-1]``."""
        new = self._slots(new_slot).reshape(-1)
        return self.extend(tokens, slots, new)

    def _slots(self, slots) -> torch.Tensor:
        if isinstance(slots, int):
            slots = [slots]
        return torch.as_tensor(slots, dtype=torch.int64).reshape(-1).to(self.device)
