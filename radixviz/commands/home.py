"""``radixviz home`` (and plain ``radixviz``): the app's home screen."""
from __future__ import annotations

from typing import TYPE_CHECKING

import os

from radixviz.errors import UsageError
from radixviz.settings import DEVICE_ARG, POOL_SLOTS

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("home", help="open the app: lessons, sandbox, quiz (the default)")
    p.add_argument("--lessons", action="append", default=[], metavar="DIR",
                   help="also list the lessons in DIR (repeatable)")
    p.add_argument("--pool-size", type=POOL_SLOTS.arg, default=POOL_SLOTS.default, metavar="N",
                   help=f"KV pool slots (default {POOL_SLOTS.default})")
    p.add_argument("--device", type=DEVICE_ARG, default="auto", help="auto, cpu or cuda (default auto)")
    p.add_argument("--buggy", action="store_true", help="the sandbox starts with the pre-#7 matcher")
    p.add_argument("--no-preload", dest="preload", action="store_false",
                   help="load the engine (and torch) only when a screen needs it, not while the menu "
                        "shows (radixviz serve does this, so idle sessions stay small)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for folder in args.lessons:
        if not os.path.isdir(folder):
            raise UsageError(f"--lessons {folder}: no such folder")
    from radixviz.tui.app import RadixvizApp  # Textual: only when the app opens
    app = RadixvizApp("home", lesson_dirs=args.lessons, pool_size=args.pool_size, device=args.device,
                      buggy=args.buggy, preload_engine=args.preload)
    app.run()
    return app.return_code or 0
