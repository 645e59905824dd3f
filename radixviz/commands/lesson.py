"""``radixviz lesson N``: play lesson N in the stepper."""
from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser("lesson", help="play lesson N in the stepper (see: radixviz lessons)")
    p.add_argument("number", metavar="N", help="the lesson's number (or id)")
    p.add_argument("--lessons", action="append", default=[], metavar="DIR",
                   help="also look for lessons in DIR (repeatable)")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    p.add_argument("--export", metavar="FILE", default=None,
                   help="write the lesson to FILE instead of playing it: .html (a page with its text "
                        "and predictions, answers behind a click), .gif or .pdf")
    from .export_pages import add_page_args
    add_page_args(p)
    p.set_defaults(func=run)


def find(number: str, lessons: list):
    """The lesson whose number or id is ``number``, or None."""
    for lesson in lessons:
        if str(lesson.number) == number.strip() or lesson.id == number.strip():
            return lesson
    return None


def run(args) -> int:
    from radixviz.cli import UsageError
    from radixviz.commands.sandbox import check_device
    from radixviz.lessons import LessonError, load_lessons
    check_device(args.device)
    try:
        lessons = load_lessons(args.lessons)
    except (LessonError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None
    lesson = find(args.number, lessons)
    if lesson is None:
        known = ", ".join(str(l.number) for l in lessons) or "none installed"
        raise UsageError(f"no lesson {args.number!r} (lessons: {known})")
    if args.export is not None:
        from .export_pages import export_lesson
        return export_lesson(lesson, args)
    from radixviz.tui.app import RadixvizApp
    # the same folders again for the home screen that h opens
    app = RadixvizApp("lesson", lesson=lesson, device=args.device, lesson_dirs=args.lessons)
    app.run()
    return app.return_code or 0
