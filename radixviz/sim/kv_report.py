"""Plain-text lines for a KV report (``KVReport``), shared by ``radixviz verify-kv`` and the app.

No UI library here. The lines that replay a session (``session_lines``, ``sandbox_lines``,
``lesson_lines``) are in ``radixviz.script.kv_session``, beside the session they replay.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache import token_text

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

KEY_WIDTH = 20


def _show_key(key: Sequence[Any]) -> str:
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
