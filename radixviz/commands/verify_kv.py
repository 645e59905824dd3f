"""``radixviz verify-kv``: are the K/V a match reuses the K/V a recompute would give?"""
from __future__ import annotations

import argparse
import json

from radixviz.errors import UsageError
from radixviz.settings import SEED
from radixviz.sim.kv_report import table_lines

from .run import add_script_args, apply_all, read_ops, refused, reports_script_errors

EPILOG = """\
Every insert runs a tiny seeded transformer on the tokens after the cached prefix and
stores their keys and values in the pool; every match compares the K/V at the slots it
returned (and the next-token logits computed on them) with a from-scratch run. Tree,
slots and evictions are those of `radixviz run` on the same script.

examples:
  radixviz verify-kv -e 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match Hello_world'
  radixviz verify-kv --buggy -e 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match Hello_world'
  radixviz verify-kv script.rv --json

exit status: 0 every match agrees, 1 some match diverges, 2 bad input
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "verify-kv", help="check cache reuse on real K/V computed by a tiny model",
        description="Run operations on a cache whose pool holds real K/V, and check every "
                    "match against a from-scratch computation.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_script_args(p)
    p.add_argument("--seed", type=SEED.arg, default=SEED.default, help="model weights seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


@reports_script_errors
def run(args: argparse.Namespace) -> int:
    ops = read_ops(args)
    # the session and the report import torch: only once the script parsed
    from radixviz.script.kv_session import KVSession

    try:
        session = KVSession(buggy=args.buggy, device=args.device, seed=args.seed,
                            pool_size=args.pool_size)
    except ValueError as exc:
        raise UsageError(f"--device {args.device}: {exc}") from None
    error = apply_all(session, ops)
    report = session.report()  # the matches checked before a refused operation still count
    if args.json:
        doc = report.to_dict()
        if error is not None:
            doc["error"] = str(error)
        print(json.dumps(doc, indent=2))
    else:
        print("\n".join(table_lines(report)))
    if error is not None:
        return refused(error)
    return 0 if report.ok else 1

