"""Check a cache's matches on real numbers: reuse the matched K/V, compare with recompute.

A ``KVSession`` keeps a radix cache over a pool whose slots hold K/V computed by the tiny
model. Every insert runs the model on the tokens after the matched prefix, reusing the
prefix's K/V as a prefill would; every match gathers the K/V at the slots it returned
and compares them (and the next-token logits computed on top of them) with a
from-scratch run of the same tokens. With the #7 fix they agree to float rounding; with
the matcher from before #7 a fork such as the chapter's ``Hello_world`` picks up K/V that
were computed in another context, and the numbers say from which token on.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from radixviz.cache import as_key, preview_match
from radixviz.script import DEFAULT_POOL_SIZE, KEY_OPS, Op, ScriptError, Session
from radixviz.sim.tiny_model import TinyModel, token_ids

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


def as_op(op) -> Op:
    """A parsed ``Op`` as is; a ``(name, arg)`` tuple (handy in code and tests) made into one."""
    if isinstance(op, Op):
        return op
    name, *rest = op
    arg = rest[0] if rest else None
    if name in KEY_OPS:
        return Op(name, key=as_key(arg), text=f"{name} {arg!r}")
    if name == "evict":
        return Op(name, count=int(arg), text=f"evict {arg}")
    if name == "matcher":
        return Op(name, mode="buggy" if arg in ("buggy", True) else "fixed", text=f"matcher {arg}")
    if name != "reset":
        raise ValueError(f"unknown operation {name!r}")
    return Op(name, text=name)


class KVSession:
    """The script session the app and ``radixviz run`` use, with a model filling its pool.

    The tree, slots and evictions are exactly the plain session's (``script.Session``); this
    adds the numbers: each insert computes the K/V of the slots the tree keeps, reusing the
    prefix the current matcher returns, and each match is checked against a recompute.
    """

    def __init__(self, buggy: bool = False, device="auto", seed: int = 0,
                 pool_size: int = DEFAULT_POOL_SIZE, atol: float = ATOL, rtol: float = RTOL):
        self.session = Session(pool_size, buggy=buggy, device=device)
        self.model = TinyModel(self.session.pool, seed=seed)
        self.seed, self.atol, self.rtol = seed, atol, rtol
        self.checks: list[MatchCheck] = []

    @property
    def cache(self):
        return self.session.cache

    @property
    def pool(self):
        return self.session.pool

    @property
    def device(self) -> str:
        return str(self.session.pool.device)

    def report(self) -> KVReport:
        return KVReport(tuple(self.checks), self.device, self.seed, self.atol, self.rtol)

    def apply(self, op) -> MatchCheck | None:
        """Run one operation; a match returns (and records) its check. Raises ScriptError,
        with nothing changed, for an operation the session or the model refuses."""
        parsed, op = isinstance(op, Op), as_op(op)
        ids = None
        if op.name in KEY_OPS:
            try:
                ids = token_ids(op.key)
            except ValueError as exc:
                raise ScriptError(op.file, op.line, op.col, str(exc)) from None
        plan = self._plan_prefill(op.key, ids) if op.name == "insert" else None
        record = self.session.apply(op)
        self.model.pool = self.session.pool  # a reset brings a fresh pool
        if plan is not None:
            self._fill(plan, record.result)
        elif op.name == "match" and ids:  # an empty key reuses nothing: nothing to check
            slots = torch.as_tensor(record.result["slots"], dtype=torch.int64)
            check = self._check(op, ids, slots, op.where() if parsed else "")
            self.checks.append(check)
            return check
        return None

    # ---------------------------------------------------------------- inserts

    def _plan_prefill(self, key, ids):
        """What the request would reuse: the prefix the current matcher returns (read off a
        snapshot, so the tree's clock and shape stay as the plain session has them), with
        its K/V copied out before the insert's eviction can free those slots."""
        preview = preview_match(self.cache.snapshot(), key, self.cache.buggy_match)
        past = self.model.gather(list(preview.slots)) if preview.matched else None
        return ids, preview.matched, past

    def _fill(self, plan, result) -> None:
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
            self.pool.k_buffer[i][idx] = keys[i][held:]
            self.pool.v_buffer[i][idx] = values[i][held:]

    # ---------------------------------------------------------------- matches

    def _check(self, op, ids, slots, where: str) -> MatchCheck:
        """Compare the K/V at ``slots`` (and the logits computed on them) with a recompute."""
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
        return MatchCheck(len(self.session.records), where, op.key,
                          self.cache.buggy_match, m, tuple(diffs.tolist()), first_bad,
                          float(lerr.max()), logits_ok, int(reused.argmax()),
                          int(ref.logits.argmax()))


def verify_ops(ops, buggy: bool = False, device="auto", seed: int = 0,
               pool_size: int = DEFAULT_POOL_SIZE) -> KVReport:
    """Run ``ops`` (parsed ``Op``s or ``(name, arg)`` tuples) on a fresh session; raise
    ScriptError at the first operation refused."""
    session = KVSession(buggy=buggy, device=device, seed=seed, pool_size=pool_size)
    for op in ops:
        session.apply(op)
    return session.report()
