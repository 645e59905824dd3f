"""A script session whose pool holds real K/V: every match checked against a recompute.

The session layer owns sessions, so the KV session lives here and drives ``sim``'s
``KVChecker`` (the model and the numbers); ``sim`` never imports ``script``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from radixviz.cache import as_key
from radixviz.sim.kv_report import table_lines, verdict
from radixviz.sim.kv_verify import ATOL, RTOL, KVChecker, KVReport, MatchCheck
from radixviz.sim.tiny_model import token_ids

from .parser import KEY_OPS, Op, ScriptError
from .session import DEFAULT_POOL_SIZE, Session

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any
    from .parser import Op
    from .session import Session

CHAPTER_OPS = (("insert", "Hello_L.A.!"), ("insert", "Hello_L.A.!world"), ("match", "Hello_world"))


def as_op(op) -> Op:
    """A parsed ``Op`` as is; a ``(name, arg)`` tuple (handy in code and tests) made into one."""
    if isinstance(op, Op):
        return op
    name, *rest = op
    arg: Any = rest[0] if rest else None
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

    def __init__(self, buggy: bool = False, device: str = "auto", seed: int = 0,
                 pool_size: int = DEFAULT_POOL_SIZE, atol: float = ATOL, rtol: float = RTOL,
                 **engine: Any):
        """``engine``: the session's engine and its options (``engine="2026", page_size=2``)."""
        self.session = Session(pool_size, buggy=buggy, device=device, **engine)
        self.checker = KVChecker(self.session.pool, seed=seed, atol=atol, rtol=rtol)
        self.checks: list[MatchCheck] = []

    @property
    def cache(self):
        return self.session.cache

    @property
    def pool(self):
        return self.session.pool

    @property
    def model(self):
        return self.checker.model

    @property
    def device(self) -> str:
        return str(self.session.pool.device)

    def report(self) -> KVReport:
        c = self.checker
        return KVReport(tuple(self.checks), self.device, c.seed, c.atol, c.rtol)

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
        plan = self.checker.plan_prefill(self.session.engine, op.key, ids) if op.name == "insert" else None
        early = plan is not None and self.session.engine_ops.fills_before_insert
        if early:   # a write to the host copies the slots during the insert: fill them first
            self.session.before_insert = lambda slots: self.checker.fill_before_insert(plan, slots)
        try:
            record = self.session.apply(op)
        finally:
            self.session.before_insert = None
        self.checker.pool = self.session.pool  # a reset brings a fresh pool
        if plan is not None and not early:
            self.checker.fill(plan, record.result)
        elif op.name in ("match", "load-back") and ids:  # an empty key reuses nothing: nothing to check
            result = record.result
            # load-back: the device prefix, then the slots it loaded, as handed to the request
            # (not the tree's view after it: a head bug can load a node no longer in the tree)
            found = result["slots"] if op.name == "match" else \
                list(self.session.engine.preview(op.key).slots[:result["matched"]]) + list(result["slots"])
            slots = torch.as_tensor(found, dtype=torch.int64)
            check = self.checker.check(len(self.session.records), op.where() if parsed else "",
                                       op.key, self.session.engine.snapshot().buggy_match, ids, slots)
            self.checks.append(check)
            return check
        return None


def verify_ops(ops: Iterable[Op | tuple[str, str]], buggy: bool = False, device: str = "auto", seed: int = 0,
               pool_size: int = DEFAULT_POOL_SIZE, **engine: Any) -> KVReport:
    """Run ``ops`` (parsed ``Op``s or ``(name, arg)`` tuples) on a fresh session (on
    ``engine``'s engine and options); raise ScriptError at the first operation refused."""
    session = KVSession(buggy=buggy, device=device, seed=seed, pool_size=pool_size, **engine)
    for op in ops:
        session.apply(op)
    return session.report()


# ---------------------------------------------------------------- report lines
# Each builds a small model and runs it (milliseconds for a sandbox-sized script, plus
# torch's import on first use): call them from a worker, not the event loop. They never
# touch the session passed in.

def sandbox_lines(ops: Iterable[Op | tuple[str, str]], buggy: bool = False, device: str = "cpu", seed: int = 0,
                  pool_size: int | None = None, **engine: Any) -> list[str]:
    """Replay ``ops`` (the sandbox's history: parsed ``Op``s or ``(name, arg)`` tuples)
    with a pool filled by the tiny model; return report lines. A refused operation
    becomes a final one-line error instead of an exception."""
    session = KVSession(buggy=buggy, device=device, seed=seed,
                        pool_size=pool_size or DEFAULT_POOL_SIZE, **engine)
    for op in ops:
        try:
            session.apply(op)
        except ScriptError as exc:
            return table_lines(session.report()) + [f"stopped: {exc}"]
    return table_lines(session.report())


def session_lines(session: Session, upto: int | None = None, seed: int = 0) -> list[str]:
    """Report lines for the first ``upto`` operations of a ``script.Session``, replayed with
    real K/V from its starting matcher and pool size (the sandbox's ``v`` key)."""
    return sandbox_lines(session.ops[:upto], buggy=session.initial_buggy, device="cpu",
                         seed=seed, pool_size=session.pool_size, **session.initial)


def lesson_lines(device: str = "cpu", seed: int = 0) -> list[str]:
    """The chapter's ``Hello_world`` fork with both matchers, told with the numbers."""
    lines = ['Cached: "Hello_L.A.!" then "Hello_L.A.!world"; the request is "Hello_world".']
    for buggy in (False, True):
        check = verify_ops(CHAPTER_OPS, buggy=buggy, device=device, seed=seed).checks[0]
        name = "before #7" if buggy else "after #7 "
        lines.append(f"{name}: {check.matched:>2} tokens reused, K/V max diff "
                     f"{check.kv_diff:.2e}, logits diff {check.logits_diff:.2e}: {verdict(check)}")
    lines.append("The buggy matcher hands back the slots of the 'world' that followed "
                 "'Hello_L.A.!', at positions 11-15; their keys and values were computed for "
                 "that context, so the model continues from the wrong numbers.")
    return lines
