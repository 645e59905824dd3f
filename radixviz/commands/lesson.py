"""``radixviz lesson N``: play lesson N in the stepper."""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.settings import DEVICE_ARG

from .export_pages import add_page_args, export_lesson
from .lessons import load_or_refuse, pick_lesson

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("lesson", help="play lesson N in the stepper (see: radixviz lessons)")
    p.add_argument("number", metavar="N", help="the lesson's number (1 or 01) or id")
    p.add_argument("--lessons", action="append", default=[], metavar="DIR",
                   help="also look for lessons in DIR (repeatable)")
    p.add_argument("--device", type=DEVICE_ARG, default="auto", help="auto, cpu or cuda (default auto)")
    p.add_argument("--export", metavar="FILE", default=None,
                   help="write the lesson to FILE instead of playing it: .html (a page with its text "
                        "and predictions, answers behind a click), .gif or .pdf")
    add_page_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    lesson = pick_lesson(load_or_refuse(args.lessons), args.number)
    if args.export is not None:
        return export_lesson(lesson, args)
    from radixviz.tui.app import RadixvizApp  # Textual: only when the app opens
    # the same folders again for the home screen that h opens
    app = RadixvizApp("lesson", lesson=lesson, device=args.device, lesson_dirs=args.lessons)
    app.run()
    return app.return_code or 0
