"""``radixviz sandbox``: the stepper on a cache of your own, optionally from a script."""
from __future__ import annotations

from typing import TYPE_CHECKING

import os

from radixviz.errors import UsageError
from radixviz.script import ScriptError, load_script   # the parser: no torch
from radixviz.settings import DEVICE_ARG, POOL_SLOTS

from .live_publish_args import add_live_publish_args, live_publisher
from .engine_args import add_engine_args, session_settings
from .run import add_history_arg

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("sandbox", help="step through operations on a live cache (the app)")
    p.add_argument("script", nargs="?", metavar="SCRIPT", help="operations to load first (one a line)")
    p.add_argument("--pool-size", type=POOL_SLOTS.arg, default=POOL_SLOTS.default, metavar="N",
                   help=f"KV pool slots (default {POOL_SLOTS.default})")
    p.add_argument("--device", type=DEVICE_ARG, default="auto", help="auto, cpu or cuda (default auto)")
    add_engine_args(p, "sandbox")
    add_history_arg(p)
    p.add_argument("--export-dir", default="radixviz-export", metavar="DIR",
                   help="where e/E write Graphviz SVGs (default ./radixviz-export)")
    add_live_publish_args(p, "each operation is applied")
    p.set_defaults(func=run)


def check_script(path: str | None) -> None:
    """Refuse a missing, unreadable or badly written script before the app starts.

    Only the parser is loaded here (no torch); operations the cache refuses are shown in the app.
    """
    if path is None:
        return
    if not os.path.lexists(path):
        raise UsageError(f"{path}: no such script file")
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a folder: give a script file (radixviz sandbox FILE.rv)")
    try:
        load_script(path)
    except ScriptError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    check_script(args.script)
    if args.publish:
        args.events = args.kv_events = True   # the flag's name before and after the option registry
    options = session_settings(args, "sandbox")
    from radixviz.tui.app import RadixvizApp  # Textual: only when the app opens
    app = RadixvizApp("sandbox", script=args.script, buggy=bool(args.buggy), pool_size=args.pool_size,
                      device=args.device, export_dir=args.export_dir, engine_options=options,
                      history_mb=args.history_mb)
    with live_publisher(args) as live:
        if live is not None:
            from radixviz.wire.live_publish import publish_as_applied  # pyzmq and msgspec: only when publishing
            app.on_session = lambda session: publish_as_applied(session, live)
        app.run()
    return app.return_code or 0
