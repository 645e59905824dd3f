"""Find and load lessons: the shipped ones, then any a teacher adds with ``--lessons DIR``."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from radixviz.files import ReadError, excerpt, read_text

from ..markdown_file import FormatError, read_markdown
from .model import Lesson, LessonError
from .parse import FRONT_MATTER, MAX_LESSON_BYTES, parse_lesson, read_lesson_text

if TYPE_CHECKING:
    from collections.abc import Iterable

# In a wheel the top-level lessons/ folder is installed as radixviz/lessons_data/.
_PACKAGE = Path(__file__).resolve().parents[2]        # radixviz/
_INSTALLED = _PACKAGE / "lessons_data"
_CHECKOUT = _PACKAGE.parent / "lessons"


def shipped_lessons_dir() -> Path:
    """The folder holding the lessons that come with radixviz (source checkout, else wheel)."""
    # a checkout is preferred so that --check names the files a teacher edits
    if (_CHECKOUT.parent / "pyproject.toml").is_file() and _CHECKOUT.is_dir():
        return _CHECKOUT
    return _INSTALLED


def markdown_files(directory: Path) -> list[Path]:
    """The ``*.md`` files of a folder, by name (README.md is a guide, neither kind)."""
    return sorted(p for p in Path(directory).glob("*.md") if p.is_file() and p.name.lower() != "readme.md")


def is_challenge_file(path: Path) -> bool:
    """A file with a ```goal block is a challenge (challenge.py), not a lesson."""
    try:
        text = read_text(path, MAX_LESSON_BYTES)
    except ReadError:
        return False   # the lesson loader reports what is wrong with it
    return any(fence.kind == "goal" for fence in read_markdown(text).fences)


def lesson_files(directory: Path) -> list[Path]:
    """The lesson files of a folder, by name."""
    return [p for p in markdown_files(directory) if not is_challenge_file(p)]


def load_lessons(extra_dirs: Iterable[str | Path] = (), problems: list | None = None,
                 include_shipped: bool = True) -> list[Lesson]:
    """All lessons, ordered by number.

    A bad file raises LessonError, unless ``problems`` is a list: then bad files are left
    out and each error is appended to it. A missing ``extra_dirs`` entry raises
    FileNotFoundError (bad input, not a bad lesson). Ids and numbers must be unique.
    """
    sources = [(shipped_lessons_dir(), True)] if include_shipped else []
    for directory in extra_dirs:
        directory = Path(directory)
        if not directory.is_dir():
            raise FileNotFoundError(f"no such lesson folder: {directory}")
        sources.append((directory, False))

    lessons: list[Lesson] = []
    seen_ids: dict = {}
    seen_numbers: dict = {}
    for directory, shipped in sources:
        for path in lesson_files(directory):
            try:
                lesson = parse_lesson(read_lesson_text(path), path, shipped)
                _unique(lesson, seen_ids, seen_numbers)
            except LessonError as exc:
                if problems is None:
                    raise
                problems.extend(exc.problems)
                continue
            seen_ids[lesson.id] = lesson
            seen_numbers[lesson.number] = lesson
            lessons.append(lesson)
    return sorted(lessons, key=lambda l: (l.number, l.id))


def _unique(lesson: Lesson, seen_ids: dict, seen_numbers: dict) -> None:
    line = _meta_line(lesson, "id")
    if lesson.id in seen_ids:
        raise LessonError(str(lesson.path), line, f"duplicate lesson id {lesson.id!r} "
                          f"(already used by {seen_ids[lesson.id].path})")
    if lesson.number in seen_numbers:
        raise LessonError(str(lesson.path), _meta_line(lesson, "number"), f"duplicate lesson number "
                          f"{lesson.number} (already used by {seen_numbers[lesson.number].path})")


def _meta_line(lesson: Lesson, key: str) -> int:
    """The front-matter line that set ``key`` (1 when it came from the file name)."""
    try:
        _, where, _ = read_markdown(read_text(lesson.path, MAX_LESSON_BYTES)).front_matter(FRONT_MATTER)
    except (ReadError, FormatError):
        return 1
    return where.get(key, 1)


def find_lesson(lessons: list[Lesson], wanted: str) -> Lesson:
    """The lesson ``wanted`` names: its number (``1`` or ``01``), its id (``the-node``) or its
    file name without ``.md`` (``01-the-node``), case and surrounding spaces ignored. The one
    lookup every command uses; KeyError with the choices otherwise."""
    ref = str(wanted).strip().lower()
    for lesson in lessons:
        if ref.isdecimal() and int(ref) == lesson.number:
            return lesson
        if ref in (lesson.id.lower(), lesson.path.stem.lower()):
            return lesson
    raise KeyError(f"no lesson {excerpt(wanted)} (lessons: {', '.join(str(l.number) for l in lessons)})")
