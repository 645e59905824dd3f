"""``radixviz serve``: the app in web browsers, one session (one app process) per tab."""
from __future__ import annotations

import os
import shlex
import sys
import webbrowser

from radixviz.cli import UsageError
from radixviz.commands.lesson import find
from radixviz.commands.sandbox import check_device
from radixviz.lessons import LessonError, load_lessons

DEFAULT_MAX_SESSIONS = 30


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
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--open", action="store_true", help="open the page in this computer's browser")
    p.add_argument("--max-sessions", type=int, default=DEFAULT_MAX_SESSIONS, metavar="N",
                   help=f"sessions at once; the next tab is told the class is full (default {DEFAULT_MAX_SESSIONS})")
    p.add_argument("--lessons", action="append", default=[], metavar="DIR",
                   help="also offer the lessons in DIR (repeatable)")
    p.add_argument("--buggy", action="store_true", help="the sandbox starts with the pre-#7 matcher")
    p.add_argument("--device", default="cpu", help="device of each session's KV pool (default cpu)")
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
    """Everything a session would refuse, refused once here, before the server starts."""
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: use 0 to 65535")
    if args.max_sessions < 1:
        raise UsageError(f"--max-sessions {args.max_sessions}: allow at least one session")
    if args.buggy and args.lesson is not None:
        raise UsageError("--buggy sets the sandbox's matcher; a lesson sets its own")
    check_device(args.device)
    for folder in args.lessons:
        if not os.path.isdir(folder):
            raise UsageError(f"--lessons {folder}: no such folder")
    if args.lesson is not None:
        try:
            lessons = load_lessons(args.lessons)
        except (LessonError, FileNotFoundError) as exc:
            raise UsageError(str(exc)) from None
        if find(args.lesson, lessons) is None:
            known = ", ".join(str(lesson.number) for lesson in lessons)
            raise UsageError(f"no lesson {args.lesson!r} (lessons: {known})")


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
