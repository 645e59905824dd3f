"""``radixviz serve``: the app in web browsers, one session (one app process) per tab; and
``radixviz serve --report``: what each student of the class has done."""
from __future__ import annotations

import argparse
import ipaddress
import os
import re
import secrets
import shlex
import sys
import webbrowser
from pathlib import Path

from radixviz.classroom.keepers import IDLE_SECONDS
from radixviz.classroom.limits import REQUEST_BURST, REQUESTS_PER_SECOND
from radixviz.classroom.students import DEFAULT_STUDENTS, Roster, class_rows, report_csv, report_text
from radixviz.classroom.students import MAX_STUDENTS as ROSTER_CAP
from radixviz.errors import UsageError
from radixviz.lessons.progress.places import data_dir
from radixviz.settings import DEVICE_ARG, MAX_SESSIONS, PORT, SESSION_MB, Limit, session_caps

from .lessons import load_or_refuse, pick_lesson

PER_CLIENT = Limit("sessions per address", 1, 1000, default=60)
PER_STUDENT = Limit("sessions per student", 1, 100, default=3)
MAX_STUDENTS = Limit("max students", 1, ROSTER_CAP, default=DEFAULT_STUDENTS)
JOINS = Limit("joins per minute", 1, 1000, default=10)
REQUESTS = Limit("requests per second", 1, 10_000, default=REQUESTS_PER_SECOND)
DISK_MB = Limit("disk", 1, 1_000_000, default=300)
KEY_DAYS = Limit("key days", 1, 3650, default=30)
DETACHED = Limit("detached timeout", 1, 7 * 24 * 3600, default=IDLE_SECONDS)
_CODE = re.compile(r"[A-Za-z0-9_-]{8,64}")


def _address(text: str) -> str:
    """--trust-proxy: an IP address, as the server will compare it with a peer's."""
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        raise argparse.ArgumentTypeError("give the proxy's IP address (a name is not checked)") from None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "serve", help="serve the app to web browsers (a classroom: one session per tab)",
        description="Serve the whole app in web browsers with textual-serve. Each tab runs its own "
                    "session; students need only a browser. Each student joins once by name and "
                    "keeps their own progress; nothing a tab does opens or writes a file of yours.",
        epilog="example: radixviz serve --host 0.0.0.0 --port 8000 --max-sessions 40 "
               "(the default host lets only this computer connect; another host needs a class "
               "code, made up and printed in the link to share unless --code gives one)")
    p.add_argument("lesson", nargs="?", metavar="N", help="open every session in lesson N instead of the home screen")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this computer only; 0.0.0.0 for the room)")
    p.add_argument("--port", type=PORT.arg, default=PORT.default, help=f"port (default {PORT.default})")
    p.add_argument("--open", action="store_true", help="open the page in this computer's browser")
    p.add_argument("--max-sessions", type=MAX_SESSIONS.arg, default=MAX_SESSIONS.default, metavar="N",
                   help=f"sessions at once; the next tab is told the class is full (default {MAX_SESSIONS.default})")
    p.add_argument("--per-student", type=PER_STUDENT.arg, default=PER_STUDENT.default, metavar="N",
                   help=f"sessions one student may hold at once (default {PER_STUDENT.default})")
    p.add_argument("--per-client", type=PER_CLIENT.arg, default=PER_CLIENT.default, metavar="N",
                   help=f"sessions one address may hold at once, a flood guard (default {PER_CLIENT.default}: "
                        "a room behind one proxy or NAT is one address)")
    p.add_argument("--trust-proxy", metavar="ADDRESS", type=_address,
                   help="the address of a reverse proxy in front of the server: for requests from it "
                        "(only), the client is the last address in X-Forwarded-For")
    p.add_argument("--max-students", type=MAX_STUDENTS.arg, default=MAX_STUDENTS.default, metavar="N",
                   help=f"students who may join the class; the next is told to ask you "
                        f"(default {MAX_STUDENTS.default}; the teacher's page removes one and frees the name)")
    p.add_argument("--joins-per-minute", type=JOINS.arg, default=JOINS.default, metavar="N",
                   help=f"joins one address may make in a minute (default {JOINS.default})")
    p.add_argument("--requests-per-second", type=REQUESTS.arg, default=REQUESTS.default, metavar="N",
                   help=f"HTTP requests one address may make a second, after a burst of {REQUEST_BURST} "
                        f"seconds' worth (default {REQUESTS_PER_SECOND}: a burst of "
                        f"{REQUEST_BURST * REQUESTS_PER_SECOND}, "
                        "a room behind one NAT loading the page at once); past it, 429 and wait")
    p.add_argument("--disk-mb", type=DISK_MB.arg, default=DISK_MB.default, metavar="MB",
                   help=f"the class folder's disk budget in MB (default {DISK_MB.default}), each student's "
                        "share being MB / --max-students: an upload past either is refused; the teacher's "
                        "page shows what each student uses")
    caps = session_caps()
    p.add_argument("--memory-mb", type=SESSION_MB.arg, default=SESSION_MB.default, metavar="MB",
                   help=f"the memory one session's app may use, in MB of address space ({SESSION_MB.low} to "
                        f"{SESSION_MB.high}; default {SESSION_MB.default}: {caps.kv_slots:,} KV slots of device "
                        f"and host pool together, a history of {caps.history_mb} MB, scripts of "
                        f"{caps.ops_per_session} operations and {caps.script_bytes:,} bytes, the scheduler's "
                        f"{caps.sim_requests} requests; each follows the budget). The system holds each app "
                        "to it: an app past it is stopped alone, its tab and your report say so")
    p.add_argument("--key-days", type=KEY_DAYS.arg, default=KEY_DAYS.default, metavar="DAYS",
                   help=f"personal links and the teacher's key last DAYS days after they are issued "
                        f"(default {KEY_DAYS.default}); an expired link tells the student to ask you, "
                        "and the report's \"new link\" gives a fresh one")
    p.add_argument("--detached-timeout", type=DETACHED.arg, default=DETACHED.default, metavar="SECONDS",
                   help=f"each student's app runs apart from the server: if the server dies (killed, "
                        f"crashed), a server started again on the same class folder goes on with it at the "
                        f"student's next visit; an app no server is attached to ends after SECONDS "
                        f"(default {DETACHED.default}). Stopping the server (Ctrl+C) ends every app")
    p.add_argument("--new-teacher-key", action="store_true",
                   help="replace the teacher's key (kept in the class folder, so the report's link "
                        "survives a restart): the old report link stops working")
    p.add_argument("--code", metavar="CODE",
                   help="the class code in the link to share (8 to 64 letters, digits, - or _); "
                        "required off this computer, so one is made up when --host is not loopback")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a name students use to reach this computer, besides its addresses and own name")
    p.add_argument("--class-dir", metavar="DIR",
                   help="where the class keeps its students and their progress "
                        "(default: classroom in radixviz's data folder)")
    p.add_argument("--report", action="store_true",
                   help="print what each student has done (lessons, predictions, challenges, quizzes) and exit")
    p.add_argument("--csv", action="store_true", help="with --report: print it as CSV")
    p.add_argument("--lessons", action="append", default=[], metavar="DIR",
                   help="also offer the lessons in DIR (repeatable)")
    p.add_argument("--buggy", action="store_true", help="the sandbox starts with the pre-#7 matcher")
    p.add_argument("--device", type=DEVICE_ARG, default="cpu", help="device of each session's KV pool (default cpu)")
    p.set_defaults(func=run)


APP_ENV = "RADIXVIZ_SERVE_APP"   # a shell command each session runs instead (tests: an app that cannot start)


def app_command(args: argparse.Namespace) -> str:
    """The shell command each session runs: this Python, this radixviz, the options passed on
    (or, when set, the command in RADIXVIZ_SERVE_APP: how a test makes every session's app
    fail at start, as a broken install would)."""
    if os.environ.get(APP_ENV):
        return os.environ[APP_ENV]
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


def class_dir(args: argparse.Namespace) -> Path:
    return Path(args.class_dir) if args.class_dir else data_dir() / "classroom"


def check(args: argparse.Namespace) -> None:
    """Everything a session would refuse, refused once here, before the server starts (the
    numbers and the device were checked by argparse, with radixviz.settings' limits)."""
    if args.csv and not args.report:
        raise UsageError("--csv goes with --report")
    if args.buggy and args.lesson is not None:
        raise UsageError("--buggy sets the sandbox's matcher; a lesson sets its own")
    if args.code is not None and not _CODE.fullmatch(args.code):
        raise UsageError("--code: use 8 to 64 letters, digits, - or _")
    for folder in args.lessons:
        if not os.path.isdir(folder):
            raise UsageError(f"--lessons {folder}: no such folder")
    if args.class_dir and os.path.lexists(args.class_dir) and not os.path.isdir(args.class_dir):
        raise UsageError(f"--class-dir {args.class_dir}: not a folder")
    if args.lesson is not None:
        pick_lesson(load_or_refuse(args.lessons), args.lesson)


def run(args: argparse.Namespace) -> int:
    check(args)
    if args.report:
        rows = class_rows(Roster(class_dir(args)))
        print(report_csv(rows) if args.csv else report_text(rows, class_dir(args)), end="" if args.csv else "\n")
        return 0
    # aiohttp and textual-serve take seconds to import: only ``serve`` pays for them, not every command
    from radixviz.classroom.server import ClassroomServer, is_loopback, lan_address
    from radixviz.classroom.teacher import teacher_key_for

    code = args.code or (None if is_loopback(args.host) else secrets.token_urlsafe(9))
    host = lan_address() if args.host in ("0.0.0.0", "::") else args.host
    share = f"http://{'[' + host + ']' if ':' in host else host}:{args.port}/" + (f"?class={code}" if code else "")
    server = ClassroomServer(app_command(args), host=args.host, port=args.port, max_sessions=args.max_sessions,
                             class_dir=class_dir(args), token=code, per_client=args.per_client,
                             allow_hosts=args.allow_host, max_students=args.max_students,
                             joins_per_minute=args.joins_per_minute, disk_mb=args.disk_mb,
                             key_days=args.key_days, per_student=args.per_student, trust_proxy=args.trust_proxy,
                             requests_per_second=args.requests_per_second, detached_timeout=args.detached_timeout,
                             memory_mb=args.memory_mb, confine_memory=args.device == "cpu", lesson_dirs=args.lessons,
                             teacher_key=teacher_key_for(class_dir(args), args.new_teacher_key, args.key_days))
    teacher = f"http://{'[' + host + ']' if ':' in host else host}:{args.port}/teacher?key={server.teacher_key}"

    def started() -> None:
        reach = ("only this computer can connect (--host 0.0.0.0 lets the room in)"
                 if is_loopback(args.host) else f"listening on {args.host}")
        print(f"radixviz is served at {share} : {reach}; at most {args.max_sessions} sessions. "
              "Ctrl+C stops.", flush=True)
        print(f"  share this link with the class{' (it holds the class code)' if code else ''}: {share}", flush=True)
        print(f"  your class report (keep this link to yourself): {teacher}", flush=True)
        if args.device != "cpu":
            print(f"  --device {args.device}: CUDA reserves more address space than a budget, so the "
                  f"system does not hold the apps to {args.memory_mb} MB; what a tab types still is", flush=True)
        if args.open:
            webbrowser.open(share)

    server._on_start = started
    try:
        server.serve()
    except OSError as exc:
        raise UsageError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0
