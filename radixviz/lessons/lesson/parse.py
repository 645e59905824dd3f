"""Read one lesson file: front matter, narrative, ```radixviz and ```predict blocks.

A lesson is Markdown a teacher can write by hand::

    ---
    id: matching
    number: 2
    title: Matching, and the split
    ---
    Some narrative...

    ```predict
    question: How many tokens of "Hello_world" hit?
    choices: 0 | 6 | 11
    answer: 6
    check: matched
    explain: The walk stops where the edge forks.
    ```

    ```radixviz
    match "Hello_world"
    ```

Without front matter, the first ``# heading`` is the title; ``id`` then defaults to the
file name and ``number`` to its leading digits (``03-insert.md`` is lesson 3).
"""
from __future__ import annotations

import difflib
import re
from pathlib import Path

from radixviz.files import BOM, ReadError, read_bytes, strip_controls
from radixviz.script.parser import ScriptError, parse_script

from ..markdown_file import FormatError, Prose, read_markdown
from ..grading import read_slots
from .model import Lesson, LessonError, Narrative, Operations, Pointer, Predict

MAX_LESSON_BYTES = 500_000
OPS_FENCE, PREDICT_FENCE = "radixviz", "predict"
FRONT_MATTER = ("id", "number", "title")
_FIELD = re.compile(r"^([A-Za-z_]+)\s*:\s*(.*)$")
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
PREDICT_FIELDS = ("question", "choices", "answer", "check", "explain")
# a passage only the app can act on ("Press v now"): left out of --read and the HTML export
APP_ONLY = re.compile(r"<!--\s*app\s*-->(.*?)<!--\s*/app\s*-->([ \t]*)", re.S)
_APP_MARK = re.compile(r"<!--\s*/?app\s*-->")
# what a paragraph points at on screen (model.Pointer): the app brings it into view
POINTER = re.compile(r"[ \t]*<!--\s*show:(.*?)-->", re.S)
_POINTER_LINE = re.compile(r"\n[ \t]*(?:<!--\s*show:.*?-->[ \t]*)+(?=\n|$)", re.S)   # marks alone on a line
POINTER_FORMS = 'node "TEXT", slots 3 4, host-slots 0-9, tree "TEXT" or pool "TEXT"'


def read_lesson_text(path: Path) -> str:
    """The file's text, terminal control sequences removed; LessonError for unreadable,
    binary, oversized or non-UTF-8 files and for anything that is not a regular file (a
    FIFO or device is never read)."""
    name = str(path)
    try:
        data = read_bytes(path, MAX_LESSON_BYTES)
    except ReadError as exc:
        reason = str(exc)
        raise LessonError(name, 1, reason if reason.startswith("file too large")
                          else f"cannot read: {reason}") from None
    if b"\x00" in data:
        raise LessonError(name, 1, "binary file: a lesson is Markdown text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LessonError(name, data[:exc.start].count(b"\n") + 1, "not UTF-8 text") from None
    # a lesson is printed (lessons --read) and drawn: it may not drive the terminal
    return strip_controls(text[1:] if text.startswith(BOM) else text)


def parse_lesson(text: str, path: Path | str, shipped: bool = True) -> Lesson:
    """Parse a lesson's text; raise LessonError for a bad file, its ``problems`` listing
    every problem found (bad predict and operation blocks do not stop the reading)."""
    path, name = Path(path), str(path)
    source = read_markdown(text)
    try:
        meta, meta_lines, body_start = source.front_matter(FRONT_MATTER)
    except FormatError as exc:
        raise LessonError(name, exc.line, exc.message) from None
    unclosed = source.unclosed()
    if unclosed is not None:
        raise LessonError(name, unclosed.line, f"unclosed {unclosed.marks}{unclosed.kind} block: "
                          f"add a line {unclosed.marks} to end it")
    blocks: list = []
    found: list[LessonError] = []      # problems that do not stop the reading of the file
    for fence in source.fences:
        if fence.kind not in (OPS_FENCE, PREDICT_FENCE) and (
                fence.kind.lower() in (OPS_FENCE, PREDICT_FENCE) or _near(fence.kind)):
            raise LessonError(name, fence.line, f"unknown block {fence.kind!r}: use ```radixviz or ```predict")
    for piece in source.pieces(body_start, (OPS_FENCE, PREDICT_FENCE)):
        if isinstance(piece, Prose):
            found.extend(_flush(blocks, list(piece.lines), piece.line, name))
        elif piece.kind == OPS_FENCE:
            try:
                ops = parse_script(piece.body, name, first_line=piece.line + 1)
            except ScriptError as exc:
                found.append(LessonError(name, exc.line, f"{exc.message} (column {exc.col})"))
                ops = None
            if ops == []:
                found.append(LessonError(name, piece.line, "empty ```radixviz block: give at least one operation"))
            # a refused block still stands in its place, so the predict before it is not also reported
            blocks.append(Operations(piece.body, piece.line + 1, tuple(ops or ())))
        else:
            try:
                blocks.append(_predict(piece.body_lines, piece.line, name))
            except LessonError as exc:
                found.append(exc)
    found.extend(_check_predicts(blocks, name))
    found.extend(_check_app_marks(blocks, name))
    if found:
        found.sort(key=lambda p: p.line)
        raise LessonError(found[0].file, found[0].line, found[0].message, tuple(found[1:]))

    title = meta.get("title") or _heading(blocks)
    if not title:
        raise LessonError(name, 1, "missing title: add 'title: ...' to the front matter or a '# Title' line")
    lesson_id = meta.get("id") or re.sub(r"^\d+[-_ ]*", "", path.stem).lower() or path.stem.lower()
    if not _ID.match(lesson_id):
        raise LessonError(name, meta_lines.get("id", 1),
                          f"bad id {lesson_id!r}: use lower-case letters, digits, - and _")
    number_text = meta.get("number") or (re.match(r"^(\d+)", path.stem) or [None, None])[1]
    if number_text is None:
        raise LessonError(name, 1, "missing number: add 'number: N' to the front matter or start the file name with it")
    try:
        number = int(number_text)
    except ValueError:
        raise LessonError(name, meta_lines.get("number", 1), f"bad number {number_text!r}: a whole number") from None
    if not any(isinstance(b, Operations) for b in blocks):
        raise LessonError(name, 1, "no ```radixviz block: a lesson needs operations to play")
    return Lesson(lesson_id, number, title, path, tuple(blocks), shipped)


def _near(info: str) -> bool:
    return bool(difflib.get_close_matches(info.lower(), (OPS_FENCE, PREDICT_FENCE), n=1, cutoff=0.75))


def _flush(blocks: list, prose: list[str], start: int, name: str) -> list[LessonError]:
    """Add the paragraphs ``prose`` as a Narrative; the problems of its pointers."""
    while prose and not prose[0].strip():
        prose.pop(0)
        start += 1
    while prose and not prose[-1].strip():
        prose.pop()
    if not prose:
        return []
    text, problems, pointers = "\n".join(prose), [], []
    for mark in POINTER.finditer(text):
        line = start + text.count("\n", 0, mark.start())
        try:
            pointers.append(_pointer(mark.group(1).strip(), line, POINTER.sub("", text[:mark.start()])))
        except ValueError as exc:
            problems.append(LessonError(name, line, str(exc)))
    text = POINTER.sub("", _POINTER_LINE.sub("", text))   # a mark's own line goes with it
    if not APP_ONLY.search(text):
        blocks.append(Narrative(text, start, pointers=tuple(pointers)))
        return problems

    def tidy(kept: str) -> str:
        return re.sub(r"\n{3,}", "\n\n", kept).strip()
    blocks.append(Narrative(tidy(APP_ONLY.sub("", text)), start,
                            tidy(APP_ONLY.sub(lambda m: m.group(1) + m.group(2), text)), tuple(pointers)))
    return problems


def _pointer(body: str, line: int, before: str) -> Pointer:
    """A ``<!-- show: ... -->`` mark's Pointer; ValueError saying what is wrong with it."""
    kind, _, rest = body.partition(" ")
    rest = rest.strip()
    sentence = " ".join(re.split(r"\n\s*\n", before)[-1].split()[-8:])
    if kind in ("node", "tree", "pool"):
        quoted = re.fullmatch(r'"(.+)"', rest)
        if not quoted:
            raise ValueError(f"show: {kind} needs its text in double quotes, e.g. {kind} \"Hello_\"")
        return Pointer(kind, quoted.group(1), line, sentence)
    if kind in ("slots", "host-slots"):
        slots = read_slots(rest)
        if not slots:
            raise ValueError(f"show: {kind} needs slot numbers, e.g. {kind} 3 4 or {kind} 0-9")
        return Pointer(kind, slots, line, sentence)
    raise ValueError(f"unknown pointer {body!r}: show: {POINTER_FORMS}")


def _heading(blocks: list) -> str | None:
    for block in blocks:
        if isinstance(block, Narrative):
            for raw in block.text.splitlines():
                if raw.startswith("# "):
                    return raw[2:].strip()
    return None


def _predict(body: list[str], fence_line: int, name: str) -> Predict:
    fields: dict = {}
    last = None
    for offset, raw in enumerate(body):
        lineno = fence_line + 1 + offset
        if not raw.strip():
            continue
        field = _FIELD.match(raw.strip())
        if field and field.group(1).lower() in PREDICT_FIELDS and not raw[:1].isspace():
            last = field.group(1).lower()
            if last in fields:
                raise LessonError(name, lineno, f"{last}: given twice in this predict block")
            fields[last] = [field.group(2).strip()]
        elif last is not None and raw[:1].isspace():
            fields[last].append(raw.strip())          # an indented line continues the field
        else:
            raise LessonError(name, lineno, f"bad predict line {raw.strip()!r}: "
                              f"expected one of {', '.join(f + ':' for f in PREDICT_FIELDS)}")
    text = {k: " ".join(v).strip() for k, v in fields.items()}
    for needed in ("question", "answer"):
        if not text.get(needed):
            raise LessonError(name, fence_line, f"predict block without {needed}: add '{needed}: ...'")
    choices = tuple(c.strip() for c in text.get("choices", "").split("|") if c.strip())
    if choices and text["answer"] not in choices:
        raise LessonError(name, fence_line,
                          f"answer {text['answer']!r} is not one of the choices {' | '.join(choices)}")
    return Predict(text["question"], choices, text["answer"], fence_line, text.get("check"), text.get("explain", ""))


def _check_app_marks(blocks: list, name: str) -> list[LessonError]:
    """A ``<!-- app -->`` without its ``<!-- /app -->`` (or the other way round) would show
    its marker to the learner."""
    return [LessonError(name, block.line, "unpaired <!-- app --> marker: wrap an app-only "
                        "passage in <!-- app --> and <!-- /app -->")
            for block in blocks
            if isinstance(block, Narrative) and _APP_MARK.search(block.in_app)]


def _check_predicts(blocks: list, name: str) -> list[LessonError]:
    return [LessonError(name, block.line, "predict block with no ```radixviz block after it to show the answer")
            for index, block in enumerate(blocks)
            if isinstance(block, Predict) and not any(isinstance(b, Operations) for b in blocks[index + 1:])]
