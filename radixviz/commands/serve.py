"""``radixviz serve``: the app in web browsers, one session (one app process) per tab."""
from __future__ import annotations

import os
import shlex
import sys
import webbrowser

from radixviz.errors import UsageError
from radixviz.settings import DEVICE_ARG, MAX_SESSIONS, PORT

from .lessons import load_or_refuse, pick_lesson


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "serve", help="serve the app to web browsers (a classroom: one session per tab)",
        description="Serve the whole app in web browsers with textual-serve. Each tab runs its own "
                    "session; students need only a browser.",
        epilog="example: radixviz serve --host 0.0.0.0 --port 8000 --max-sessions 40 "
               "(the default host lets only this computer connect)")
    p.add_argument("lesson", nargs="?", metavar="N", help="open every session in lesson N instead of the home screen")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this computer only; 0.0.0.0 for the room)")
    p.add_argument("--port", type=PORT.arg, default=PORT.default, help=f"port (default {PORT.default})")
    p.add_argument("--open", action="store_true", help="open the page in this computer's browser")
    p.add_argument("--max-sessions", type=MAX_SESSIONS.arg, default=MAX_SESSIONS.default, metavar="N",
                   help=f"sessions at once; the next tab is told the class is full (default {MAX_SESSIONS.default})")
    p.add_argument("--lessons", action="append", default=[], metavar="DIR",
                   help="also offer the lessons in DIR (repeatable)")
    p.add_argument("--buggy", action="store_true", help="the sandbox starts with the pre-#7 matcher")
    p.add_argument("--device", type=DEVICE_ARG, default="cpu", help="device of each session's KV pool (default cpu)")
    p.set_defaults(func=run)


def app_command(args) -> str:
    """The shell command each session runs: this Python, this radixviz, the options passed on."""
    argv = [sys.executable, "-m", "radixviz"]
    if args.lesson is not None:
        argv += ["lesson", args.lesson]
    else:
        argv += ["home", "--no-preload"] + (["--buggy"] if args.buggy else [])
    for folder in args.lessons:
        argv += ["--lessons", folder]
    argv += ["--device", args.device]
    # exec: the session's process is the app itself, so closing the tab ends it
    return "exec " + shlex.join(argv)


def check(args) -> None:
    """Everything a session would refuse, refused once here, before the server starts (the
    numbers and the device were checked by argparse, with radixviz.settings' limits)."""
    if args.buggy and args.lesson is not None:
        raise UsageError("--buggy sets the sandbox's matcher; a lesson sets its own")
    for folder in args.lessons:
        if not os.path.isdir(folder):
            raise UsageError(f"--lessons {folder}: no such folder")
    if args.lesson is not None:
        pick_lesson(load_or_refuse(args.lessons), args.lesson)


def run(args) -> int:
    check(args)
    # aiohttp and textual-serve take seconds to import: only ``serve`` pays for them, not every command
    from .serve_classroom import ClassroomServer

    url = f"http://{args.host}:{args.port}/"
    if args.host in ("0.0.0.0", "::"):
        url = f"http://localhost:{args.port}/"

    def started() -> None:
        reach = ("only this computer can connect (--host 0.0.0.0 lets the room in)"
                 if args.host in ("127.0.0.1", "localhost", "::1") else f"listening on {args.host}")
        print(f"radixviz is served at {url} : {reach}; at most {args.max_sessions} sessions. "
              "Ctrl+C stops.", flush=True)
        if args.open:
            webbrowser.open(url)

    server = ClassroomServer(app_command(args), host=args.host, port=args.port,
                             max_sessions=args.max_sessions, on_start=started)
    try:
        server.serve()
    except OSError as exc:
        raise UsageError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0
