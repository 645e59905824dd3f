"""``radixviz sandbox``: the stepper on a cache of your own, optionally from a script."""
from __future__ import annotations

import os


def register(subparsers) -> None:
    p = subparsers.add_parser("sandbox", help="step through operations on a live cache (the app)")
    p.add_argument("script", nargs="?", metavar="SCRIPT", help="operations to load first (one a line)")
    p.add_argument("--buggy", action="store_true", help="start with the pre-#7 matcher")
    p.add_argument("--pool-size", type=int, default=128, metavar="N", help="KV pool slots (default 128)")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    p.add_argument("--export-dir", default="radixviz-export", metavar="DIR",
                   help="where e/E write Graphviz SVGs (default ./radixviz-export)")
    p.set_defaults(func=run)


def check_pool_size(size: int) -> None:
    from radixviz.cli import UsageError
    if not 1 <= size <= 1_000_000:
        raise UsageError(f"--pool-size {size}: use a number of slots from 1 to 1000000")


def check_device(device: str) -> None:
    """Refuse a device the pool would refuse, before the app opens (in the app it would be a
    crash in the loading worker). Only an explicit cuda pays for importing torch here."""
    import re
    from radixviz.cli import UsageError
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", device):
        raise UsageError(f"--device {device}: use auto, cpu or cuda")
    if device.startswith("cuda"):
        from radixviz.cache import resolve_device
        try:
            resolve_device(device)
        except ValueError as exc:
            raise UsageError(f"--device {device}: {exc}") from None


def check_script(path: str | None) -> None:
    """Refuse a missing, unreadable or badly written script before the app starts.

    Only the parser is loaded here (no torch); operations the cache refuses are shown in the app.
    """
    from radixviz.cli import UsageError
    from radixviz.script.parser import ScriptError, load_script
    if path is None:
        return
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such script file")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{path}: cannot read the script file")
    try:
        load_script(path)
    except ScriptError as exc:
        raise UsageError(str(exc)) from None


def run(args) -> int:
    check_pool_size(args.pool_size)
    check_device(args.device)
    check_script(args.script)
    from radixviz.tui.app import RadixvizApp
    app = RadixvizApp("sandbox", script=args.script, buggy=args.buggy, pool_size=args.pool_size,
                      device=args.device, export_dir=args.export_dir)
    app.run()
    return app.return_code or 0
