"""The ``v`` key: replay the sandbox's operations on real K/V and say whether reuse is right."""
from __future__ import annotations


def verify_session(session) -> str:
    """One line: what reusing each match's K/V gives against recomputing it (the tiny model)."""
    from radixviz.script import ScriptError
    from radixviz.script.kv_session import verify_ops

    if not any(op.name == "match" for op in session.ops):
        return "KV check: no match yet to check (type : match \"…\" first)"
    try:
        report = verify_ops(session.ops, buggy=session.initial_buggy, device=session.device,
                            pool_size=session.pool_size)
    except ScriptError as exc:
        return f"KV check could not replay the operations: {exc.message}"
    bad = [c for c in report.checks if not c.agree]
    if not bad:
        worst = max((c.kv_diff for c in report.checks), default=0.0)
        return (f"KV check: {len(report.checks)} match(es), reused K/V equal recomputed "
                f"(max diff {worst:.1e}) on {report.device}")
    first = bad[0]
    return (f"KV check: {len(bad)} of {len(report.checks)} match(es) reuse wrong K/V — op {first.index} "
            f"({first.matched} tokens, {'buggy' if first.buggy else 'fixed'} matcher) differs from "
            f"token {first.first_bad} on; next token {first.next_reused} vs {first.next_scratch} recomputed")
