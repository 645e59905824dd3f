"""Plain-text lines for a KV check, shared by ``radixviz verify-kv`` and the app.

No UI library here: the app puts these lines in a panel (sandbox key ``v``, the #7
lesson), the CLI prints them. Entry points for the app:

- ``session_lines(session, upto=None)``: for a ``script.Session`` (the stepper's), replay
  its first ``upto`` operations (all by default) with real K/V from its starting matcher
  and pool size, and report every match in them (sandbox key ``v``);
- ``sandbox_lines(ops, buggy)``: the same from a list of operations;
- ``lesson_lines(device)``: the chapter's ``Hello_world`` fork under both matchers (#7 lesson).

Each builds a small model and runs it (milliseconds for a sandbox-sized script, plus
torch's import on first use): call them from a worker, not the event loop. They never
touch the session passed in.
"""
from __future__ import annotations

from radixviz.cache import token_text

CHAPTER_OPS = (("insert", "Hello_L.A.!"), ("insert", "Hello_L.A.!world"), ("match", "Hello_world"))
KEY_WIDTH = 20


def _show_key(key) -> str:
    text = "".join(token_text(t) for t in key)
    text = text if len(text) <= KEY_WIDTH else text[:KEY_WIDTH - 1] + "…"
    return repr(text)


def verdict(check) -> str:
    """One phrase: agree, or where and by how much the reused K/V go wrong."""
    if check.agree:
        return "ok  agree"
    if check.first_bad is None:
        return "BAD next-token logits differ"
    tok = token_text(check.key[check.first_bad])
    return (f"BAD diverges from token {check.first_bad} {tok!r} "
            f"(off by {check.token_diffs[check.first_bad]:.3g} there)")


def token_strip(check, before: int = 3, after: int = 6) -> str:
    """Per-token differences around the first bad one: ``l 0 | w 2.3  o 2.68 ...``."""
    lo = max(0, check.first_bad - before)
    hi = min(check.matched, check.first_bad + after)
    cells = [f"{token_text(check.key[i])} {check.token_diffs[i]:.3g}" for i in range(lo, hi)]
    cells.insert(check.first_bad - lo, "|")
    more = " …" if hi < check.matched else ""
    return f"|reused - recomputed| by token {lo}..{hi - 1}: " + "  ".join(cells) + more


def table_lines(report) -> list[str]:
    """The report as an aligned table plus a one-line summary."""
    lines = [f"KV check: tiny model (seed {report.seed}) on {report.device}; agree means "
             f"|reused - recomputed| <= {report.atol:g} + {report.rtol:g}*|recomputed|"]
    if not report.checks:
        return lines + ["no match operations: nothing to check"]
    wide = max([5] + [len(c.where) for c in report.checks])
    head = f"{'op':>3}  {'where':<{wide}}  matcher  {'key':<{KEY_WIDTH + 2}}  {'hit':>4}  " \
           f"{'K/V max diff':>12}  {'logits diff':>11}  result"
    lines += [head, "-" * len(head)]
    for c in report.checks:
        lines.append(f"{c.index:>3}  {c.where:<{wide}}  {'buggy' if c.buggy else 'fixed':<7}  "
                     f"{_show_key(c.key):<{KEY_WIDTH + 2}}  {c.matched:>4}  {c.kv_diff:>12.2e}  "
                     f"{c.logits_diff:>11.2e}  {verdict(c)}")
        if c.first_bad is not None:
            lines.append(f"{'':>5}{token_strip(c)}")
    lines.append(summary(report))
    return lines


def summary(report) -> str:
    n = len(report.checks)
    bad = [c for c in report.checks if not c.agree]
    worst = max((max(c.kv_diff, c.logits_diff) for c in report.checks), default=0.0)
    if not bad:
        return (f"all {n} match{'es' if n != 1 else ''} agree: the reused K/V and logits equal a "
                f"from-scratch run (max diff {worst:.2e}, float rounding)")
    return (f"{len(bad)} of {n} match{'es' if n != 1 else ''} diverge: the returned slots hold K/V "
            f"computed for other tokens or positions (max diff {worst:.3g})")


def sandbox_lines(ops, buggy: bool = False, device="cpu", seed: int = 0,
                  pool_size: int | None = None) -> list[str]:
    """Replay ``ops`` (the sandbox's history: parsed ``Op``s or ``(name, arg)`` tuples)
    with a pool filled by the tiny model; return report lines. A refused operation
    becomes a final one-line error instead of an exception."""
    from radixviz.script import DEFAULT_POOL_SIZE, ScriptError
    from radixviz.sim.kv_verify import KVSession

    session = KVSession(buggy=buggy, device=device, seed=seed,
                        pool_size=pool_size or DEFAULT_POOL_SIZE)
    for op in ops:
        try:
            session.apply(op)
        except ScriptError as exc:
            return table_lines(session.report()) + [f"stopped: {exc}"]
    return table_lines(session.report())


def session_lines(session, upto: int | None = None, seed: int = 0) -> list[str]:
    """Report lines for the first ``upto`` operations of a ``script.Session``."""
    return sandbox_lines(session.ops[:upto], buggy=session.initial_buggy, device="cpu",
                         seed=seed, pool_size=session.pool_size)


def lesson_lines(device="cpu", seed: int = 0) -> list[str]:
    """The chapter's example with both matchers, told with the numbers."""
    from radixviz.sim.kv_verify import verify_ops

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
