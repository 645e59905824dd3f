"""The classroom formats of ``radixviz export`` and ``radixviz lesson N --export``: a stepping
HTML page, an animated GIF, a multi-page PDF handout. Argument checks and file writing only;
the pictures come from radixviz.render."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from radixviz.errors import EXIT_OK, UsageError
from radixviz.files import atomic_write
from radixviz.lessons import Narrative, Operations, Predict
from radixviz.render.gif import write_gif, write_pdf
from radixviz.render.graphviz import GraphvizError
from radixviz.render.html_page import StepNote, build_page
from radixviz.script import ScriptError   # the parser: no torch

from .run import refused

if TYPE_CHECKING:
    import argparse

    from radixviz.lessons import Lesson
    from radixviz.script.session import Session


PAGE_SUFFIXES = (".html", ".htm")
GIF_SUFFIXES = (".gif",)
MAX_PICTURES = 1000       # frames of a GIF or pages of a PDF: past that, a slide or handout is unreadable


def add_page_args(p: argparse.ArgumentParser) -> None:
    """``--theme``, ``--per-op``, ``--fps``: shared by ``export`` and ``lesson --export``."""
    p.add_argument("--theme", choices=("light", "dark"), default="light",
                   help="colours of .html, .gif and multi-page .pdf exports (default light)")
    p.add_argument("--per-op", action="store_true",
                   help=".gif/.pdf: one frame per operation (its last step) instead of one per step")
    p.add_argument("--fps", type=float, default=None, metavar="N",
                   help=".gif: frames per second (default 2, or 1 with --per-op)")


def is_page_output(path: str | None, all_steps) -> bool:
    """True for the formats this module writes: .html, .gif, and .pdf with a bare --all-steps."""
    if path is None:
        return False
    suffix = Path(path).suffix.lower()
    return suffix in PAGE_SUFFIXES + GIF_SUFFIXES or (suffix == ".pdf" and all_steps is True)


def check_page_args(args: argparse.Namespace) -> None:
    """Refuse bad combinations before any work: one line each."""
    if args.fps is not None and not 0.1 <= args.fps <= 50:
        raise UsageError(f"--fps {args.fps:g}: use 0.1 to 50 frames per second")
    suffix = Path(args.output).suffix.lower() if args.output else ""
    if (args.per_op or args.fps is not None) and suffix in PAGE_SUFFIXES:
        raise UsageError("--per-op and --fps are for .gif and .pdf exports; the page has every step")
    if getattr(args, "step", None) is not None and suffix in PAGE_SUFFIXES + GIF_SUFFIXES:
        raise UsageError(f"--step draws one picture; a {suffix} export holds every step")


def pick_frames(session: Session, per_op: bool) -> list:
    """Every frame, or the last frame of each operation (the state it leaves)."""
    if not per_op:
        return list(session.frames)
    return [session.frames[r.last_frame] for r in session.records if r.last_frame >= session.frames.first]


def write_output(session: Session, args: argparse.Namespace, *, title: str, notes=None) -> str:
    """Write args.output in the format its extension names; return the line to print.

    Raises UsageError for a file that cannot be written or a missing Graphviz."""

    path = Path(args.output)
    suffix = path.suffix.lower()
    if not session.frames:
        raise UsageError("nothing to export: no operation was applied")
    try:
        if suffix in PAGE_SUFFIXES:
            data = build_page(session.frames, session.records, title=title, theme=args.theme,
                              notes=notes, max_edge=args.max_edge).encode("utf-8")
            what = f"{len(session.frames)} steps"
        else:
            frames = pick_frames(session, args.per_op)
            total = len(session.frames)
            if len(frames) > MAX_PICTURES:
                raise UsageError(f"{len(frames)} frames is too many for a {suffix} (at most {MAX_PICTURES}): "
                                 "use --per-op, or the .html page")
            if suffix in GIF_SUFFIXES:
                fps = args.fps or (1.0 if args.per_op else 2.0)
                data = write_gif(frames, total, theme=args.theme, fps=fps, max_edge=args.max_edge)
            else:
                data = write_pdf(frames, total, theme=args.theme, title=title, max_edge=args.max_edge)
            what = f"{len(frames)} {'operations' if args.per_op else 'steps'}"
    except GraphvizError as exc:
        raise UsageError(str(exc)) from None
    try:
        atomic_write(path, data)     # a full disk leaves the old file whole, not truncated
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    return f"wrote {path} ({what})"


def lesson_notes(lesson: Lesson, session: Session) -> tuple:
    """Play ``lesson`` into ``session``; return (notes by frame index, the refused op's error or None).

    A step shows the lesson text in force when its block ran, and the predictions asked just
    before the block. Text that follows a block is added to that block's last step, where the
    app shows it too.
    """

    notes: dict[int, StepNote] = {}   # a frame index -> the words shown with it
    text, pending, last_block = "", [], None
    for block in lesson.blocks:
        if isinstance(block, Narrative):
            text = block.text.strip()
            if last_block is not None:
                last, shown, asked = last_block
                shown = f"{shown}\n\n{text}".strip()
                notes[last], last_block = StepNote(shown, asked), (last, shown, asked)
        elif isinstance(block, Predict):
            pending.append(block)
            last_block = None
        elif isinstance(block, Operations):
            first = len(session.frames)
            try:
                for op in block.ops:
                    session.apply(op)
            except ScriptError as exc:
                return notes, exc
            asked, pending = tuple(pending), []
            for index in range(first, len(session.frames)):
                notes[index] = StepNote(text, asked)
            last_block = (len(session.frames) - 1, text, asked) if len(session.frames) > first else None
    return notes, None


def export_lesson(lesson: Lesson, args: argparse.Namespace) -> int:
    """``radixviz lesson N --export FILE``."""
    from radixviz.script import Session   # loads torch (the engine)

    args.output, args.max_edge, args.all_steps, args.step = args.export, 24, True, None
    suffix = Path(args.output).suffix.lower()
    if suffix not in PAGE_SUFFIXES + GIF_SUFFIXES + (".pdf",):
        raise UsageError(f"--export {args.output}: use .html, .gif or .pdf")
    check_page_args(args)
    try:
        session = Session(device=args.device)
    except ValueError as exc:
        raise UsageError(f"--device {args.device}: {exc}") from None
    notes, error = lesson_notes(lesson, session)
    if error is not None and not session.frames:
        return refused(error)
    print(write_output(session, args, title=f"Lesson {lesson.number}: {lesson.title}", notes=notes))
    return refused(error) if error is not None else EXIT_OK
