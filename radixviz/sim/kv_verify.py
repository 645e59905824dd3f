"""Check a cache's matches on real numbers: reuse the matched K/V, compare with recompute.

A ``KVChecker`` puts K/V computed by the tiny model into a radix cache's pool
(``radixviz.script.kv_session.KVSession`` drives it from the operation language). Every
insert runs the model on the tokens after the matched prefix, reusing the prefix's K/V as
a prefill would; every match gathers the K/V at the slots it returned and compares them
(and the next-token logits computed on top of them) with a from-scratch run of the same
tokens. With the #7 fix they agree to float rounding; with
the matcher from before #7 a fork such as the chapter's ``Hello_world`` picks up K/V that
were computed in another context, and the numbers say from which token on.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import torch

from radixviz.sim.tiny_model import TinyModel

if TYPE_CHECKING:
    from radixviz.cache import TokenToKVPool

ATOL = RTOL = 1e-4  # float32 rounding across different batch shapes stays near 1e-6


@dataclass(frozen=True)
class MatchCheck:
    """One match, reused against recomputed."""
    index: int              # 1-based number of the operation in the script
    where: str              # FILE:LINE:COL, or "" for operations given as tuples
    key: tuple
    buggy: bool             # the matcher that answered
    matched: int            # tokens the matcher reported as cached
    token_diffs: tuple      # per matched position: max |reused - recomputed| over layers, K and V
    first_bad: int | None   # first position whose K/V are off beyond tolerance
    logits_diff: float      # max |logits| difference for the token after the key
    logits_ok: bool
    next_reused: int        # argmax next token computed on the reused K/V
    next_scratch: int       # argmax next token computed from scratch

    @property
    def kv_diff(self) -> float:
        return max(self.token_diffs, default=0.0)

    @property
    def agree(self) -> bool:
        return self.first_bad is None and self.logits_ok

    def to_dict(self) -> dict:
        return dict(op=self.index, where=self.where, key=_key_json(self.key),
                    matcher="buggy" if self.buggy else "fixed", matched=self.matched,
                    agree=self.agree, kv_max_abs_diff=self.kv_diff,
                    logits_max_abs_diff=self.logits_diff, first_diverging_token=self.first_bad,
                    diff_at_first_diverging=(None if self.first_bad is None
                                             else self.token_diffs[self.first_bad]),
                    next_token_reused=self.next_reused, next_token_scratch=self.next_scratch,
                    token_diffs=list(self.token_diffs))


@dataclass(frozen=True)
class KVReport:
    checks: tuple
    device: str
    seed: int
    atol: float
    rtol: float

    @property
    def ok(self) -> bool:
        return all(c.agree for c in self.checks)

    def to_dict(self) -> dict:
        return dict(ok=self.ok, device=self.device, seed=self.seed, atol=self.atol,
                    rtol=self.rtol, matches=[c.to_dict() for c in self.checks])


def _key_json(key: tuple):
    if all(isinstance(t, str) for t in key):
        return "".join(key)
    return [t if isinstance(t, int) else ord(t) for t in key]


class KVChecker:
    """The numbers behind a cache: K/V for the slots an insert keeps, and a recompute for
    every match. It reads the cache and writes only the pool's K/V buffers, so the tree,
    slots and evictions stay exactly what the cache alone would make."""

    def __init__(self, pool: TokenToKVPool, seed: int = 0, atol: float = ATOL, rtol: float = RTOL):
        self.model = TinyModel(pool, seed=seed)
        self.seed, self.atol, self.rtol = seed, atol, rtol

    @property
    def pool(self):
        return self.model.pool

    @pool.setter
    def pool(self, pool: TokenToKVPool) -> None:
        self.model.pool = pool      # a reset brings a fresh pool

    # ---------------------------------------------------------------- inserts

    def plan_prefill(self, engine, key: tuple, ids):
        """What the request would reuse: the prefix ``engine`` (radixviz.cache's facade) would
        match now (read off a snapshot, so the tree's clock and shape stay as the plain
        session has them), with its K/V copied out before the insert's eviction can free
        those slots. Call it before the insert; hand the result to ``fill`` after."""
        preview = engine.preview(key)
        past = self.model.gather(list(preview.slots)) if preview.matched else None
        return ids, preview.matched, past

    def fill(self, plan, result) -> None:
        """Write the K/V of the slots the tree kept: positions ``held..`` of the key."""
        ids, reused, past = plan
        held, new = result["prefix_len"], result["new_slots"]
        if not new:
            return
        keys, values = past if past else ([], [])
        if reused < len(ids):
            out = self.model.forward(ids[reused:], *(past or (None, None)))
            keys = [torch.cat(p) for p in zip(keys, out.keys)] if past else out.keys
            values = [torch.cat(p) for p in zip(values, out.values)] if past else out.values
        # a buggy match may have reused more than the tree held: those positions keep the
        # K/V the request actually used, wrong ones included, as the real server would
        idx = torch.as_tensor(new, dtype=torch.int64, device=self.pool.device)
        for i in range(self.model.layers):
            # under insert-slots release (#4) the last token has no slot: len(new) is one short
            self.pool.k_buffer[i][idx] = keys[i][held:held + len(new)]
            self.pool.v_buffer[i][idx] = values[i][held:held + len(new)]

    def fill_before_insert(self, plan, slots: torch.Tensor) -> None:
        """Write the K/V of every position of the key into ``slots``, the request's fresh
        slots, before the insert: an engine that copies an insert's KV to a host tier at
        once (write-through) must find the request's real K/V there, as SGLang's forward
        pass has computed it by then. The slots the insert then frees are simply unused."""
        ids, reused, past = plan
        if not len(slots):
            return
        keys, values = past if past else ([], [])
        if reused < len(ids):
            out = self.model.forward(ids[reused:], *(past or (None, None)))
            keys = [torch.cat(p) for p in zip(keys, out.keys)] if past else out.keys
            values = [torch.cat(p) for p in zip(values, out.values)] if past else out.values
        idx = slots.to(device=self.pool.device, dtype=torch.int64)
        for i in range(self.model.layers):
            self.pool.k_buffer[i][idx] = keys[i][:len(idx)]
            self.pool.v_buffer[i][idx] = values[i][:len(idx)]

    # ---------------------------------------------------------------- matches

    def check(self, index: int, where: str, key: tuple, buggy: bool, ids, slots: torch.Tensor) -> MatchCheck:
        """Compare the K/V at ``slots`` (and the logits computed on them) with a recompute.
        ``index``, ``where``, ``key`` and ``buggy`` say which match this was, for the report."""
        m = len(slots)
        ref = self.model.from_scratch(ids)
        keys, values = self.model.gather(slots)
        bad = torch.zeros(m, dtype=torch.bool, device=ref.logits.device)
        diffs = torch.zeros(m, dtype=ref.logits.dtype, device=ref.logits.device)
        for got, want in zip(keys + values, ref.keys + ref.values):
            err = (got - want[:m]).abs().flatten(1)
            diffs = torch.maximum(diffs, err.amax(1))
            bad |= (err > self.atol + self.rtol * want[:m].abs().flatten(1)).any(1)
        first_bad = int(torch.nonzero(bad)[0]) if bool(bad.any()) else None
        # the token after the key, computed on top of the reused K/V; a prefill always
        # computes at least the last token, since it samples from that token's logits
        r = min(m, len(ids) - 1)
        past = ([k[:r] for k in keys], [v[:r] for v in values]) if r else (None, None)
        reused = self.model.forward(ids[r:], *past).logits
        lerr = (reused - ref.logits).abs()
        logits_ok = bool((lerr <= self.atol + self.rtol * ref.logits.abs()).all())
        return MatchCheck(index, where, key, buggy, m, tuple(diffs.tolist()), first_bad,
                          float(lerr.max()), logits_ok, int(reused.argmax()),
                          int(ref.logits.argmax()))
