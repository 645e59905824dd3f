"""``radixviz run``: apply a script and print each operation's result, the final tree and pool.

``--json`` prints one JSON document instead (docs/json-schema.md); ``--steps`` prints every
micro-step with the engine line that made it. A refused operation stops the run: what was
applied is still printed, then the error, and the exit code is 2.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import functools
import sys

from rich.console import Console
from rich.text import Text

from radixviz.errors import EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK, UsageError, shorten_typed
from radixviz.render.compare import compare_view
from radixviz.render.jsondoc import session_document
from radixviz.render.json_out import write_json
from radixviz.render.log import step_line
from radixviz.render.pool import PoolGrid
from radixviz.render.source_map import locate
from radixviz.render.summary import op_result, op_summary
from radixviz.render.tree import TreeView
from radixviz.render.views import load_views, more_pools
from radixviz.script import ScriptError, load_script, parse_script   # the parser: no torch
from radixviz.script.kv_text import event_line
from radixviz.cache.engines import default_engine, engine_with
from radixviz.cache.options import EVICTION, PAGE
from radixviz.settings import DEVICE_ARG, HISTORY_MB, POOL_SLOTS, WIDTH

from .engine_args import add_engine_args, engine_settings

from .wire_args import ENDPOINT, add_publisher_args, open_publisher, wire_for

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from radixviz.script.parser import Op, ScriptError


INLINE_FILE = "<-e>"
COMPARE_KINDS = ("matchers", "engines")


def add_script_args(p: argparse.ArgumentParser, skip: tuple = (), only: tuple[str, ...] = ()) -> None:
    """The arguments ``run`` and ``export`` share: where the script comes from and the session
    (``skip``, ``only``: as ``add_engine_args`` takes them)."""
    p.add_argument("script", nargs="?", metavar="SCRIPT", help="a file of operations, one a line")
    p.add_argument("-e", "--exec", dest="ops", metavar="OPS",
                   help='operations given inline, ";" between them, e.g. -e "insert abc; match abd"')
    p.add_argument("--pool-size", type=POOL_SLOTS.arg, default=POOL_SLOTS.default, metavar="N",
                   help=f"KV pool slots (default {POOL_SLOTS.default})")
    p.add_argument("--device", type=DEVICE_ARG, default="auto",
                   help="auto (CUDA when torch sees one), cpu or cuda")
    add_engine_args(p, "run", skip, only)
    add_history_arg(p)


def add_history_arg(p: argparse.ArgumentParser) -> None:
    """--history-mb: how much memory the steps kept may take (the oldest go past it)."""
    p.add_argument("--history-mb", type=HISTORY_MB.arg, default=HISTORY_MB.default, metavar="MB",
                   help=f"memory the steps kept may take; past it the oldest steps are dropped "
                        f"(default {HISTORY_MB.default})")


def note_dropped(session) -> None:
    """One line on stderr when the oldest steps were dropped to keep the memory limit."""
    frames = session.frames
    if frames.dropped:
        print(f"note: steps 1-{frames.dropped} were dropped to keep memory under "
              f"{frames.limit_mb:g} MB (raise --history-mb to keep them)", file=sys.stderr)


def add_compare_arg(p: argparse.ArgumentParser, what: str) -> None:
    """``--compare [matchers|engines]``: the same operations in two columns."""
    p.add_argument("--compare", nargs="?", const="matchers", choices=COMPARE_KINDS, default=None,
                   help="run the operations twice and " + what + ": 'matchers' (the default) "
                        "with the fixed and the pre-#7 matcher; 'engines' on the 2024 engine "
                        "(--buggy picks its matcher) and the 2026 engine (--page-size, "
                        "--eviction-policy), or with --engine unified the 2026 engine beside the "
                        "unified one (its own options too); give the script before --compare")


def compare_side_by_side(args: argparse.Namespace, ops: Sequence[Op]):
    """The SideBySide ``--compare`` asks for; UsageError for options that make no sense with it."""
    from radixviz.script import compare_engines, compare_ops   # the engine: torch

    if getattr(args, "kv_events", False):
        raise UsageError("--compare shows two trees, not KV events: drop --events")
    if args.compare == "matchers":
        if args.buggy or args.engine is not None or args.page_size is not None \
                or args.eviction_policy is not None:
            raise UsageError("--compare runs both matchers of the 2024 engine: drop --buggy, --engine, "
                             "--page-size and --eviction-policy (or use --compare engines)")
        check_device(args)
        return compare_ops(ops, args.pool_size, args.device)
    page_size = PAGE.default if args.page_size is None else args.page_size
    eviction_policy = args.eviction_policy or EVICTION.default
    if args.engine is not None and args.engine not in (default_engine(), engine_with("pages", without="host_tier")):
        # a later engine (the unified tree) beside today's cache, with its own options
        settings = engine_settings(args)
        more = tuple((name, settings[name]) for name in settings
                     if name not in ("page_size", "eviction_policy") and getattr(args, name, None) is not None)
        check_device(args)
        return compare_engines(ops, args.pool_size, args.device, page_size=page_size, eviction_policy=eviction_policy,
                               later=args.engine, more=more)
    if args.engine is not None:
        raise UsageError("--compare engines runs both the 2024 and the 2026 engine: drop --engine "
                         "(or name a later engine to see it beside the 2026 one)")
    check_device(args)
    return compare_engines(ops, args.pool_size, args.device, buggy=args.buggy, page_size=page_size,
                           eviction_policy=eviction_policy)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "run", help="run a script of operations and print results, tree and pool",
        description="Apply operations (insert, match, lock, unlock, evict N, matcher fixed|buggy, "
                    "tokens ..., reset; with --engine 2026 also ns NAME after a key, events on) to a "
                    "live cache and KV pool. --events prints the KV events each operation queued.",
        epilog='example: radixviz run -e \'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match Hello_world\' '
               "--buggy. Exit codes: 0 ok, 1 an invariant check failed after the run, "
               "2 bad input (FILE:LINE:COL: message; what was applied is still printed).")
    add_script_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON document (see docs/json-schema.md)")
    p.add_argument("--steps", action="store_true",
                   help="print every micro-step with the engine line it came from (its step name without sources)")
    add_compare_arg(p, "show them side by side")
    p.add_argument("--width", type=WIDTH.arg, default=None, help="output width in columns (default: the terminal's)")
    p.add_argument("--publish", type=ENDPOINT, default=None, metavar="ENDPOINT",
                   help="also send each operation's KV events on SGLang's wire (implies --events; "
                        "see radixviz publish), e.g. tcp://*:5557")
    add_publisher_args(p, prefix="publish-")
    p.set_defaults(func=run)


def reports_script_errors(handler):
    """Wrap a command handler: a ScriptError it lets out (a script that does not parse) is
    printed as ``FILE:LINE:COL: message`` and the exit code is 2."""
    @functools.wraps(handler)
    def wrapper(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except ScriptError as exc:
            return refused(exc)
    return wrapper


def refused(error: ScriptError) -> int:
    """Print a refused script's error as one line on stderr; the exit code for bad input."""
    # the file's name as typed is cut to an excerpt if it is long (a 100,000-character path)
    print(shorten_typed(str(error), [str(getattr(error, "file", ""))]), file=sys.stderr)
    return EXIT_BAD_INPUT


def read_ops(args: argparse.Namespace) -> list:
    """The parsed operations; raises UsageError or ScriptError before anything is applied."""
    if (args.script is None) == (args.ops is None):
        raise UsageError("give a SCRIPT file or -e OPS (one of the two)")
    if args.script is not None:
        return load_script(args.script)
    ops = parse_script(args.ops, INLINE_FILE)
    if not ops:
        raise ScriptError(INLINE_FILE, 1, 1, "empty script: no operations")
    return ops


def new_session(args: argparse.Namespace):
    """A Session for the command's options; UsageError for a device torch refuses."""
    from radixviz.script import Session   # imports the engine, so torch: only once the script parsed

    try:
        return Session(device=args.device, history_mb=args.history_mb, settings=engine_settings(args))
    except ValueError as exc:
        raise UsageError(f"--device {args.device}: {exc}") from None


def check_device(args: argparse.Namespace) -> None:
    """UsageError, before any work, for a device torch refuses."""
    from radixviz.script import Session   # torch

    try:
        Session(pool_size=args.pool_size, device=args.device)
    except ValueError as exc:
        raise UsageError(f"--device {args.device}: {exc}") from None


def apply_all(session, ops: Sequence[Op]):
    """Apply ``ops`` in order, up to the first one refused; return its ScriptError, or None."""
    for op in ops:
        try:
            session.apply(op)
        except ScriptError as exc:
            return exc
    return None


@reports_script_errors
def run(args: argparse.Namespace) -> int:
    ops = read_ops(args)
    if args.compare:
        return run_compare(args, ops)
    if args.publish:
        args.events = args.kv_events = True   # the flag's name before and after the option registry
    session = new_session(args)
    error = apply_all(session, ops)
    if args.publish:
        publish_records(args, session.records)
    if args.json:
        # the tree nests a node's children inside it: written with a loop, as deep as it goes
        write_json(session_document(session, error=error, steps=args.steps), sys.stdout)
        sys.stdout.write("\n")
    else:
        print_human(session, args)
    note_dropped(session)
    if error is not None:
        return refused(error)
    return check(session)


def publish_records(args: argparse.Namespace, records) -> None:
    """Send each applied operation's KV events as one batch (``--publish``), once a subscriber
    has joined or ``--publish-wait`` has passed; replay requests are answered while it waits."""
    # msgspec (the wire's messages) and pyzmq: only for a run that publishes, not for the
    # sandbox and lesson commands that import this module
    from radixviz.wire.from_engine import wire_events
    pub = open_publisher(args.publish, args.publish_replay, args.publish_topic,
                         wire=wire_for(args.publish_wire, getattr(args, "engine", None)))
    try:
        if not pub.wait_for_subscriber(args.publish_wait):
            print(f"note: no subscriber on {pub.endpoint} after {args.publish_wait:g} s; publishing anyway",
                  file=sys.stderr)
        for record in records:
            if record.kv_events:
                pub.publish(wire_events(record.kv_events, pub.wire))
        pub.serve(args.publish_wait if pub.replay else 0)
    finally:
        pub.close()


def run_compare(args: argparse.Namespace, ops: Sequence[Op]) -> int:
    """Both columns on the same operations; exit 0 even when they differ (that is the point)."""

    if args.json or args.steps:
        raise UsageError("--compare prints two columns: drop --json and --steps")
    side = compare_side_by_side(args, ops)
    Console(width=args.width, highlight=False, soft_wrap=False).print(compare_view(side))
    if side.error is not None:
        return refused(side.error)
    return EXIT_OK


def print_human(session, args: argparse.Namespace) -> None:
    console = Console(width=args.width, highlight=False, soft_wrap=False)
    for record in session.records:
        if args.steps:
            for frame in session.frames.kept(record.frame_range):
                console.print(step_line(frame))
                site = locate(frame.source, frame.label)  # the step's label when no source is installed
                where = Text(f"       {site.where}: ", style="dim", no_wrap=True, overflow="ellipsis")
                where.append(site.text, style="cyan")
                console.print(where, no_wrap=True, overflow="ellipsis")
            console.print(Text(f"     = {op_result(record)}", style="bold"))
        else:
            console.print(Text(op_summary(record)))  # Text: a key like "[red]" is not markup
        if args.kv_events:
            for event in record.kv_events:
                console.print(Text(f"       ⇢ {event_line(event)}", style="cyan"), no_wrap=True,
                              overflow="ellipsis")
    # the last frame is the state after the last applied operation, marks and all
    if session.frames:
        final = session.frames[-1]
        console.print()
        console.print(TreeView(final.tree, final.marks, legend=True))
        console.print()
        console.print(PoolGrid(final.pool, final.marks))
        load_views(final.tree)
        for shown in more_pools(final.tree, final.pool, final.marks):   # the host tier's grid
            console.print(shown)


def check(session) -> int:
    """Exit 1 when the cache or pool breaks an invariant after the run."""
    from radixviz.cache import InvariantError  # torch, loaded by the session already

    try:
        session.check_invariants()
    except InvariantError as exc:
        print(f"radixviz: invariant broken: {exc}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    return EXIT_OK
