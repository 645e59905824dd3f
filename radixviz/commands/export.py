"""``radixviz export``: Graphviz diagrams of a script's final state, one step, or every step.

The format comes from the output file's extension (.dot, .svg, .png, .pdf). Without the
Graphviz ``dot`` program only .dot can be written; the others fail with an install hint.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from radixviz.errors import EXIT_OK, UsageError
from radixviz.render.compare_dot import write_compare
from radixviz.render.graphviz import GraphvizError, format_for, matcher_label, write
from radixviz.render.names import remove_stale_steps, step_file_name
from radixviz.script import describe
from radixviz.settings import EDGE_LABEL

from .export_pages import add_page_args, check_page_args, is_page_output, write_output
from .run import (add_compare_arg, add_script_args, apply_all, compare_side_by_side, new_session,
                  note_dropped, read_ops, refused, reports_script_errors)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from radixviz.script.frames import Frame
    from radixviz.script.parser import Op
    from radixviz.script.session import Session


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "export", help="write the tree as a diagram (.dot .svg .png .pdf), every step as a page (.html) or a GIF",
        description="Run a script, then draw the tree (with the Rich view's marks) with Graphviz.")
    add_script_args(p)
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the file to write; its extension picks the format: .dot .svg .png .pdf (a diagram), "
                        ".html (a page stepping through every step), .gif (animated)")
    p.add_argument("--step", type=int, metavar="K",
                   help="draw the state at micro-step K, counted from 1 as run --steps and the app number them")
    p.add_argument("--all-steps", metavar="DIR", nargs="?", const=True,
                   help="write one numbered diagram per micro-step into DIR; "
                        "with -o FILE.pdf and no DIR: one multi-page PDF, a step a page")
    p.add_argument("--max-edge", type=EDGE_LABEL.arg, default=EDGE_LABEL.default, metavar="N",
                   help=f"longest edge label in characters before the middle is elided "
                        f"(default {EDGE_LABEL.default}, at least {EDGE_LABEL.low})")
    add_compare_arg(p, "draw both final trees in one diagram")
    p.add_argument("--format", choices=("dot", "svg", "png", "pdf"), default=None,
                   help="format for --all-steps (default: -o's extension, else svg)")
    add_page_args(p)
    p.set_defaults(func=run)


@reports_script_errors
def run(args: argparse.Namespace) -> int:
    if args.output is None and args.all_steps is None:
        raise UsageError("export needs -o FILE or --all-steps DIR")
    if is_page_output(args.output, args.all_steps):
        return _run_pages(args)
    if args.all_steps is True:
        raise UsageError("--all-steps needs a DIR, or -o FILE.pdf for one multi-page handout")
    if args.step is not None and args.output is None:
        raise UsageError("--step K needs -o FILE")
    if args.output is not None:
        try:
            format_for(args.output)      # refuse a bad extension before any work
        except GraphvizError:
            raise UsageError(f"cannot tell the format of {args.output}: use .dot, .svg, .png or .pdf (a "
                             "diagram), .html (a page stepping through every step) or .gif (animated)") from None
    ops = read_ops(args)
    if args.compare:
        return _export_compare(args, ops)
    session = new_session(args)
    error = apply_all(session, ops)
    try:
        if args.output is not None:
            frame = _pick_frame(session, args.step)
            title = None if args.step is None else step_title(frame)
            write(frame, Path(args.output), title=title, max_edge=args.max_edge)
            print(f"wrote {args.output}")
        if args.all_steps is not None:
            fmt = args.format or (format_for(args.output) if args.output else "svg")
            written = write_all_steps(session, Path(args.all_steps), fmt, args.max_edge)
            print(f"wrote {len(written)} diagrams to {args.all_steps}")
    except GraphvizError as exc:
        raise UsageError(str(exc)) from None
    if args.all_steps is not None:
        note_dropped(session)
    if error is not None:
        # the diagrams show the state reached before the refused operation
        return refused(error)
    return EXIT_OK


def _run_pages(args: argparse.Namespace) -> int:
    """.html, .gif and multi-page .pdf: every step (or operation) of the run in one file."""
    check_page_args(args)
    if args.max_edge < 8:
        raise UsageError(f"--max-edge {args.max_edge}: use 8 or more")
    ops = read_ops(args)
    session = new_session(args)
    error = apply_all(session, ops)
    if error is not None and not session.frames:
        return refused(error)    # the first operation was refused: nothing to show
    # the script's name: a page a teacher shares must not carry the folders of their machine
    title = f"radixviz · {Path(args.script).name if args.script else 'operations'}"
    print(write_output(session, args, title=title))
    note_dropped(session)
    return refused(error) if error is not None else EXIT_OK


def _export_compare(args: argparse.Namespace, ops: Sequence[Op]) -> int:
    if args.output is None or args.step is not None or args.all_steps is not None \
            or (args.buggy and args.compare == "matchers"):
        raise UsageError("--compare draws one diagram of both columns: give -o FILE, without "
                         "--step, --all-steps or (with both matchers) --buggy")
    side = compare_side_by_side(args, ops)
    try:
        write_compare(side, args.output, args.max_edge)
    except GraphvizError as exc:
        raise UsageError(str(exc)) from None
    print(f"wrote {args.output}")
    return refused(side.error) if side.error is not None else EXIT_OK


def _pick_frame(session: Session, step: int | None):
    frames = session.frames
    if step is None:
        # the first operation may have been refused: then the (empty) tree is drawn as it is
        return frames[-1] if frames else session.cache.snapshot()
    if not 1 <= step <= len(frames):
        raise UsageError(f"--step {step}: this run has {len(frames)} steps, numbered 1 to {len(frames)}")
    if step - 1 < frames.first:
        raise UsageError(f"--step {step}: {frames.dropped} earlier steps were dropped to keep memory "
                         f"under {frames.limit_mb:g} MB: raise --history-mb to keep them")
    return frames[step - 1]


def step_title(frame: Frame) -> str:
    """The caption of one step's diagram: its number, what it did, and the matcher."""
    return f"step {frame.number}: {describe(frame)}  ·  {matcher_label(frame.tree)}"


def write_all_steps(session: Session, folder: Path, fmt: str, max_edge: int = 24) -> list[Path]:
    """``step-0001.svg`` ... one per frame, numbered as ``--step`` and the stepper count;
    the folder is created if needed."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GraphvizError(f"cannot create {folder}: {exc.strerror or exc}") from None
    paths = []
    for frame in session.frames:
        path = folder / step_file_name(frame, fmt, len(session.frames))
        paths.append(write(frame, path, title=step_title(frame), max_edge=max_edge))
    try:
        remove_stale_steps(folder, paths, fmt)
    except OSError as exc:
        raise GraphvizError(f"cannot remove an earlier run's steps from {folder}: {exc.strerror or exc}") from None
    return paths
