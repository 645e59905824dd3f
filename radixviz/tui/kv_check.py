"""The ``v`` key: replay the sandbox's operations on real K/V and say, per match, whether
reusing the cached K/V is right. The lines go to a dialog that stays until dismissed."""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.text import tokens_text
from radixviz.script.parser import ScriptError

if TYPE_CHECKING:
    from radixviz.script.kv_session import MatchCheck
    from radixviz.script.session import Session


def verify_session(session: Session) -> list[str]:
    """Report lines: one block per match (tokens reused, first wrong token, largest
    difference, next token both ways), then a one-line summary."""
    from radixviz.script.kv_session import verify_ops   # the tiny model: torch, in a worker

    if not any(op.name in ("match", "load-back") for op in session.ops):
        return ['No match yet: nothing to check. Type : match "…" first.']
    try:
        report = verify_ops(session.ops, buggy=session.initial_buggy, device=session.device,
                            pool_size=session.pool_size, **session.initial)
    except ScriptError as exc:
        return [f"The KV check could not replay the operations: {exc.message}"]
    lines = [f"Each match's reused K/V against a recompute from scratch (tiny model, seed "
             f"{report.seed}, {report.device}).", ""]
    for check in report.checks:
        lines += match_block(check, session.ops[check.index - 1].name) + [""]
    bad = sum(not c.agree for c in report.checks)
    lines.append(f"{bad} of {len(report.checks)} match(es) reuse wrong K/V." if bad else
                 f"All {len(report.checks)} match(es) reuse the right K/V.")
    return lines


def match_block(check: MatchCheck, op_name: str = "match") -> list[str]:
    """The lines of one match's check: what it reused and whether that K/V was right."""
    matcher = "buggy (pre-#7)" if check.buggy else "fixed"
    head = f"op {check.index}: match {tokens_text(check.key)!r}, {matcher} matcher"
    if op_name == "load-back":   # the host tier: what the device held plus what came back
        head = f"op {check.index}: load-back {tokens_text(check.key)!r}"
    reused = f"  {check.matched} token(s) reused from the cache"
    if check.agree:
        return [head, reused + ": right",
                f"  largest difference {max(check.kv_diff, check.logits_diff):.1e} (float rounding)",
                f"  next token {check.next_reused}, as a recompute gives"]
    lines = [head, reused + ": WRONG"]
    if check.first_bad is not None:
        token = tokens_text(check.key[check.first_bad:check.first_bad + 1])
        lines.append(f"  first wrong token: position {check.first_bad} ({token!r}), off by "
                     f"{check.token_diffs[check.first_bad]:.3g}; its K/V were computed for "
                     f"another context")
    lines.append(f"  largest K/V difference {check.kv_diff:.3g}; logits differ by up to "
                 f"{check.logits_diff:.3g}")
    if check.next_reused == check.next_scratch:
        lines.append(f"  next token {check.next_reused} either way: the logits differ, but "
                     f"their largest entry happens to be the same token")
    else:
        lines.append(f"  next token {check.next_reused} from the reused K/V, "
                     f"{check.next_scratch} recomputed: the answer changes")
    return lines
