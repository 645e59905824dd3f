"""``radixviz verify-kv``: are the K/V a match reuses the K/V a recompute would give?"""
from __future__ import annotations

EPILOG = """\
Every insert runs a tiny seeded transformer on the tokens after the cached prefix and
stores their keys and values in the pool; every match compares the K/V at the slots it
returned (and the next-token logits computed on them) with a from-scratch run.

examples:
  radixviz verify-kv -e 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match Hello_world'
  radixviz verify-kv --buggy -e 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match Hello_world'
  radixviz verify-kv script.rv --json

exit status: 0 every match agrees, 1 some match diverges, 2 bad input
"""


def register(subparsers) -> None:
    import argparse

    p = subparsers.add_parser(
        "verify-kv", help="check cache reuse on real K/V from a tiny model",
        description="Run operations on a cache whose pool holds real K/V, and check every "
                    "match against a from-scratch computation.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("script", nargs="?", metavar="SCRIPT", help="a file of operations")
    p.add_argument("-e", dest="ops", metavar="OPS", help="operations given inline, ';'-separated")
    p.add_argument("--buggy", action="store_true", help="start with the matcher from before #7")
    p.add_argument("--device", default="auto", help="auto (default), cpu or cuda")
    p.add_argument("--seed", type=int, default=0, help="model weights seed (default 0)")
    p.add_argument("--pool-size", type=int, default=None, metavar="N",
                   help="KV slots in the pool (default: the session's, 128)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def _load_ops(args):
    from radixviz.cli import UsageError
    from radixviz.script.parser import ScriptError, load_script, parse_script

    if (args.script is None) == (args.ops is None):
        raise UsageError("verify-kv needs a SCRIPT file or -e OPS (exactly one)")
    try:
        if args.ops is not None:
            ops = parse_script(args.ops, "<-e>")
            if not ops:
                raise UsageError("-e: no operations given")
            return ops
        return load_script(args.script)
    except ScriptError as exc:
        raise UsageError(str(exc)) from None


def run(args) -> int:
    import json

    from radixviz.cli import UsageError

    ops = _load_ops(args)
    from radixviz.script import DEFAULT_POOL_SIZE, ScriptError
    from radixviz.sim.kv_report import table_lines
    from radixviz.sim.kv_verify import verify_ops

    size = DEFAULT_POOL_SIZE if args.pool_size is None else args.pool_size
    try:
        report = verify_ops(ops, buggy=args.buggy, device=args.device, seed=args.seed,
                            pool_size=size)
    except ScriptError as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:  # the device or pool size
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print("\n".join(table_lines(report)))
    return 0 if report.ok else 1
