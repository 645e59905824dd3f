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

import re
from pathlib import Path

from radixviz.files import BOM, ReadError, read_bytes, strip_controls

from .model import Lesson, LessonError, Narrative, Operations, Predict

MAX_LESSON_BYTES = 500_000
OPS_FENCE, PREDICT_FENCE = "radixviz", "predict"
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*$")
_FIELD = re.compile(r"^([A-Za-z_]+)\s*:\s*(.*)$")
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
PREDICT_FIELDS = ("question", "choices", "answer", "check", "explain")
# a passage only the app can act on ("Press v now"): left out of --read and the HTML export
APP_ONLY = re.compile(r"<!--\s*app\s*-->(.*?)<!--\s*/app\s*-->([ \t]*)", re.S)
_APP_MARK = re.compile(r"<!--\s*/?app\s*-->")


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
    from radixviz.script import ScriptError, parse_script

    path, name = Path(path), str(path)
    lines = text.splitlines()
    meta, meta_lines, body_start = _front_matter(lines, name)
    blocks: list = []
    found: list[LessonError] = []      # problems that do not stop the reading of the file
    prose: list[str] = []
    prose_start = body_start + 1
    i = body_start
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            if not prose:
                prose_start = i + 1
            prose.append(lines[i])
            i += 1
            continue
        indent, marks, info = fence.groups()
        close = _closing(lines, i + 1, marks)
        if close is None:
            raise LessonError(name, i + 1, f"unclosed {marks}{info} block: add a line {marks} to end it")
        if info not in (OPS_FENCE, PREDICT_FENCE):
            if info.lower() in (OPS_FENCE, PREDICT_FENCE) or _near(info):
                raise LessonError(name, i + 1, f"unknown block {info!r}: use ```radixviz or ```predict")
            if not prose:
                prose_start = i + 1
            prose.extend(lines[i:close + 1])   # another language: part of the narrative
            i = close + 1
            continue
        _flush(blocks, prose, prose_start)
        prose = []
        body = lines[i + 1:close]
        if info == OPS_FENCE:
            block_text = "\n".join(body)
            try:
                ops = parse_script(block_text, name, first_line=i + 2)
            except ScriptError as exc:
                found.append(LessonError(name, exc.line, f"{exc.message} (column {exc.col})"))
                ops = None
            if ops == []:
                found.append(LessonError(name, i + 1, "empty ```radixviz block: give at least one operation"))
            # a refused block still stands in its place, so the predict before it is not also reported
            blocks.append(Operations(block_text, i + 2, tuple(ops or ())))
        else:
            try:
                blocks.append(_predict(body, i + 1, name))
            except LessonError as exc:
                found.append(exc)
        i = close + 1
    _flush(blocks, prose, prose_start)
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


def _front_matter(lines: list[str], name: str) -> tuple[dict, dict, int]:
    """(fields, line of each field, index of the first body line)."""
    if not lines or lines[0].strip() != "---":
        return {}, {}, 0
    meta, where = {}, {}
    for index in range(1, len(lines)):
        raw = lines[index].strip()
        if raw == "---":
            return meta, where, index + 1
        if not raw or raw.startswith("#"):
            continue
        field = _FIELD.match(raw)
        if not field or field.group(1).lower() not in ("id", "number", "title"):
            raise LessonError(name, index + 1, f"bad front matter line {raw!r}: expected id:, number: or title: "
                              "(or a line --- to end the front matter)")
        key = field.group(1).lower()
        if key in meta:
            raise LessonError(name, index + 1, f"{key} given twice in the front matter")
        meta[key], where[key] = field.group(2).strip().strip('"'), index + 1
    raise LessonError(name, 1, "unclosed front matter: end it with a line ---")


def _closing(lines: list[str], start: int, marks: str) -> int | None:
    for j in range(start, len(lines)):
        stripped = lines[j].strip()
        if stripped.startswith(marks[0] * 3) and set(stripped) == {marks[0]} and len(stripped) >= len(marks):
            return j
    return None


def _near(info: str) -> bool:
    import difflib
    return bool(difflib.get_close_matches(info.lower(), (OPS_FENCE, PREDICT_FENCE), n=1, cutoff=0.75))


def _flush(blocks: list, prose: list[str], start: int) -> None:
    while prose and not prose[0].strip():
        prose.pop(0)
        start += 1
    while prose and not prose[-1].strip():
        prose.pop()
    if not prose:
        return
    text = "\n".join(prose)
    if not APP_ONLY.search(text):
        blocks.append(Narrative(text, start))
        return
    def tidy(kept: str) -> str:
        return re.sub(r"\n{3,}", "\n\n", kept).strip()
    blocks.append(Narrative(tidy(APP_ONLY.sub("", text)), start,
                            tidy(APP_ONLY.sub(lambda m: m.group(1) + m.group(2), text))))


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
