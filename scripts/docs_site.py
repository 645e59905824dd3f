"""The parts of README.md and docs/ that are made from the project's own files, so that no
list or count can fall behind them: the lessons and challenges (from their Markdown files),
the engines (from the registry), the commands (from the argument parser) and files shown
whole on a page (``lessons/README.md``).

A generated part sits between two comments in the Markdown::

    <!-- generated: lessons -->
    ...made from the lesson files...
    <!-- end generated -->

MkDocs runs this file as a hook (mkdocs.yml): every page's parts are made afresh at each
build, so the site is always right. README.md keeps its parts written out, for GitHub;
``tests/test_docs_site.py`` fails when they differ from what this file makes, and

    python scripts/docs_site.py --write     # README.md's parts made again
    python scripts/docs_site.py --check     # exit 1 when README.md's are out of date

A new lesson, challenge, engine or command appears in both with no edit here.
"""
from __future__ import annotations

import argparse
import io
import os
import re
import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# a part: its name, an optional argument, what is between the markers
PART = re.compile(r"(<!-- generated: (?P<name>[\w-]+)(?: (?P<arg>[^\s>]+))? -->\n)(?P<body>.*?)"
                  r"(<!-- end generated -->)", re.DOTALL)


def _lessons():
    from radixviz.lessons import load_lessons
    return load_lessons()


def _challenges():
    from radixviz.lessons.challenges.challenge import load_challenges
    return load_challenges()


def _engines():
    from radixviz.cache.engines import engine_names, engine_spec
    return [engine_spec(name) for name in engine_names()]


def lesson_engines(lesson) -> list[str]:
    """The engines a lesson's operations run on, in the order it first uses them (until its
    first ``engine`` operation a lesson plays on the session's default engine)."""
    from radixviz.cache.engines import default_engine

    ops = lesson.operations
    names = [op.mode for op in ops if op.name == "engine" and op.mode]
    if not ops or ops[0].name != "engine":
        names.insert(0, default_engine())   # the engine a session opens when none is named
    return list(dict.fromkeys(names))


def _numbers(numbers: list[int]) -> str:
    """``1–4, 9``: runs of consecutive numbers written as ranges."""
    runs: list[list[int]] = []
    for number in sorted(numbers):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def _many(count: int, noun: str, verb: str = "") -> str:
    """``17 lessons ship``, ``1 lesson ships``."""
    one = count == 1
    return f"{count} {noun if one else noun + 's'}" + (f" {verb + 's' if one else verb}" if verb else "")


def lessons_part(engine: str | None, page: Path) -> str:
    """Every lesson, or (``lessons ENGINE``) those that run on that engine."""
    lessons = [lesson for lesson in _lessons() if engine is None or engine in lesson_engines(lesson)]
    if engine is None:
        lines = [f"{_many(len(lessons), 'lesson', 'ship')} (`radixviz lessons` lists them, "
                 "`radixviz lesson N` plays one):", ""]
    else:
        lines = [f"{_many(len(lessons), 'lesson', 'run')} on it (`radixviz lesson N` plays one):" if lessons
                 else "No lesson runs on it yet.", ""]
    for lesson in lessons:
        engines = ", ".join(lesson_engines(lesson))
        # numbered by hand: Python-Markdown starts every ordered list at 1
        lines.append(f"- **{lesson.number}** {lesson.title}" + (f" *({engines})*" if engine is None else ""))
    return "\n".join(lines).rstrip() + "\n"


def challenges_part(_arg: str | None, page: Path) -> str:
    challenges = _challenges()
    lines = [f"{_many(len(challenges), 'challenge', 'ship')} (`radixviz challenges` lists them, "
             "`radixviz challenge ID` plays one):", ""]
    for challenge in challenges:
        lines.append(f"- **{challenge.number}** `{challenge.id}`: {challenge.title} "
                     f"*({challenge.level}, par {challenge.par})*")
    return "\n".join(lines) + "\n"


def _link(page: Path, target: Path, text: str) -> str:
    """A Markdown link from ``page`` to ``target``, relative (plain text when there is no such file)."""
    if not target.exists():
        return text
    return f"[{text}]({Path(os.path.relpath(target, page.parent)).as_posix()})"


def engines_part(_arg: str | None, page: Path) -> str:
    engines = _engines()
    used: dict[str, list[int]] = {spec.name: [] for spec in engines}
    for lesson in _lessons():
        for name in lesson_engines(lesson):
            used.setdefault(name, []).append(lesson.number)
    lines = [f"{_many(len(engines), 'engine')}, each one of SGLang's caches as its code stood at the version named "
             "(`engine NAME` in a script, `--engine NAME` on the command line):", "",
             "| engine | what it is | options | lessons |", "|---|---|---|---|"]
    for spec in engines:
        name = _link(page, DOCS / "engines" / f"{spec.name}.md", f"`{spec.name}`")
        flags = ", ".join(f"`{o.flag_name}`" for o in spec.options if o.flag_name) or "—"
        lines.append(f"| {name} | {spec.title} | {flags} | {_numbers(used[spec.name]) or '—'} |")
    return "\n".join(lines) + "\n"


def left_out_part(arg: str | None, page: Path) -> str:
    """What engine ``arg`` leaves out: the first paragraph under its page's "Left out" heading,
    linked to the page (the page is where it is kept)."""
    source = DOCS / "engines" / f"{arg}.md"
    found = re.search(r"^## Left out[^\n]*\n+(.+?)(?:\n\n|\Z)", source.read_text(encoding="utf-8"),
                      re.MULTILINE | re.DOTALL)
    if found is None:
        raise ValueError(f"{source.name} has no 'Left out' section")
    words = " ".join(found.group(1).split())
    words = words[:1].lower() + words[1:]   # after a colon
    link = _link(page, source, "its page")
    return f"The `{arg}` engine leaves out what a learner does not see ({link} says more): {words}\n"


def operations_part(_arg: str | None, page: Path) -> str:
    from radixviz.cache.engines import engine_names, op_owners, option_owners
    from radixviz.script.parser import OP_NAMES, USAGE, option_ops
    options = option_ops()
    lines = ["| operation | for example | engines |", "|---|---|---|"]
    for word in dict.fromkeys((*OP_NAMES, *options)):
        option = options.get(word)
        example = USAGE.get(word) or (option.usage() if option is not None else word)
        owners = option_owners(option.name) if option is not None else op_owners(word)
        engines = "every engine" if not owners or set(owners) == set(engine_names()) else \
            ", ".join(f"`{name}`" for name in owners)
        lines.append(f"| `{word}` | `{example}` | {engines} |")
    return "\n".join(lines) + "\n"


def keys_part(arg: str | None, page: Path) -> str:
    """The keys of one screen (``keys stepper.StepperScreen``) as its bindings declare them:
    the footer, the help screen and the palette read the same. A screen built on the stepper
    lists only the keys it adds or changes."""
    import importlib

    from textual.screen import Screen

    from radixviz.tui.palette import key_label
    module, _, name = str(arg).rpartition(".")
    screen = getattr(importlib.import_module(f"radixviz.tui.screens.{module}"), name)
    from radixviz.tui.screens.stepper import StepperScreen
    inherited = {(b.key, b.action, b.tooltip or b.description) for b in Screen.BINDINGS}
    if screen is not StepperScreen and issubclass(screen, StepperScreen):
        inherited |= {(b.key, b.action, b.tooltip or b.description) for b in StepperScreen.BINDINGS}
    lines = ["| keys | what they do |", "|---|---|"]
    for binding in screen.BINDINGS:
        what = binding.tooltip or binding.description
        if (binding.key, binding.action, what) in inherited or not what:
            continue
        keys = " ".join(f"`{key}`" for key in key_label(binding.key).split(" "))
        lines.append(f"| {keys} | {what.replace('|', chr(92) + '|')} |")
    if len(lines) == 2:
        return "The same keys as the stepper's.\n"
    return "\n".join(lines) + "\n"


def _parser():
    from radixviz.cli import build_parser
    return build_parser()


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _command_help() -> dict[str, str]:
    parser = _parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: choice.help or "" for choice in action._choices_actions}


def commands_part(_arg: str | None, page: Path) -> str:
    helps = _command_help()
    here = DOCS / "commands.md"
    lines = [f"{_many(len(helps), 'command')} (`radixviz COMMAND --help` for each one's options):", "",
             "| command | what it does |", "|---|---|"]
    for name, text in helps.items():
        shown = f"[`{name}`](#radixviz-{name})" if page == here else f"`{name}`"
        lines.append(f"| {shown} | {text.rstrip('.')} |")
    return "\n".join(lines) + "\n"


def usage_part(arg: str | None, page: Path) -> str:
    """``radixviz COMMAND --help`` as it prints at 80 columns (the width of the page's code)."""
    parser = _subcommands()[str(arg)]
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    try:
        out = io.StringIO()
        with redirect_stdout(out):
            parser.print_help()
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "```text\n" + out.getvalue().rstrip() + "\n```\n"


def include_part(arg: str | None, page: Path) -> str:
    """A file of the repository shown whole on ``page`` (its first heading dropped: the page
    has its own), its relative links pointed from the page, its own generated parts made."""
    source = ROOT / str(arg)
    text = re.sub(r"\A# .*\n+", "", source.read_text(encoding="utf-8"))
    text = LINK.sub(lambda found: found.group(1) + "(" + _rebased(found.group(2), source, page) + ")", text)
    return fill(text, page).rstrip() + "\n"


FENCE = re.compile(r"\s*(`{3,}|~{3,})[^`]*$")
LINK = re.compile(r"(!?\[[^\]]*\])\(([^)\s]+)\)")


def _rebased(link: str, source: Path, page: Path) -> str:
    """``link``, written in ``source``, as ``page`` must write it. A file outside docs/ is
    reached through docs/ where docs/ has it under the same path (docs/assets is assets/)."""
    if re.match(r"[a-z]+:|#", link):
        return link
    path, _, anchor = link.partition("#")
    target = Path(os.path.normpath(source.parent / path))
    if DOCS not in target.parents and (DOCS / target.relative_to(ROOT)).exists():
        target = DOCS / target.relative_to(ROOT)
    rebased = Path(os.path.relpath(target, page.parent)).as_posix()
    return rebased + ("#" + anchor if anchor else "")


PARTS: dict[str, Callable[[str | None, Path], str]] = {
    "lessons": lessons_part, "challenges": challenges_part, "engines": engines_part, "left-out": left_out_part,
    "commands": commands_part, "operations": operations_part,
    "keys": keys_part, "usage": usage_part, "include": include_part,
}


def fill(text: str, page: Path) -> str:
    """``text`` (the Markdown of ``page``) with every generated part made afresh. A part's
    own headings go one level below the heading it stands under."""
    def made(found: re.Match) -> str:
        name, arg = found.group("name"), found.group("arg")
        if name not in PARTS:
            raise ValueError(f"{page.name}: no generated part {name!r} (there are: {', '.join(PARTS)})")
        above = re.findall(r"^(#+) ", text[:found.start()], re.MULTILINE)
        body = _headings_below(PARTS[name](arg, page), len(above[-1]) if above else 1)
        return found.group(1) + body + found.group(5)
    return PART.sub(made, text)


def _headings_below(text: str, level: int) -> str:
    """``text`` with its headings moved so the highest is at ``level`` + 1 (code blocks kept)."""
    out, fenced = [], False
    shift = None
    for line in text.split("\n"):
        fenced ^= bool(FENCE.match(line))
        heading = None if fenced else re.match(r"(#+) ", line)
        if heading:
            shift = level + 1 - len(heading.group(1)) if shift is None else shift
            line = "#" * max(1, len(heading.group(1)) + shift) + line[len(heading.group(1)):]
        out.append(line)
    return "\n".join(out)


def part_names(text: str) -> list[str]:
    return [found.group("name") for found in PART.finditer(text)]


# ------------------------------------------------------------------ MkDocs hook

def on_page_markdown(markdown: str, page, config, files) -> str:
    return as_python_markdown(fill(markdown, DOCS / page.file.src_uri))


def as_python_markdown(text: str) -> str:
    """GitHub's Markdown as MkDocs' reads it the same way. Three places differ: a line that
    begins with a pull request's number (``#40313, opened...``, also after a list marker) is
    text to GitHub, which wants a space after a heading's ``#``, but a heading to MkDocs, so
    its ``#`` is escaped; and a list nested by 2 or 3 spaces is nested for GitHub but not for
    MkDocs, which wants 4; a list right under a line of text needs a blank line between for
    MkDocs. Code blocks are kept as they are."""
    out, fenced, in_list = [], False, False
    for line in text.split("\n"):
        fenced ^= bool(FENCE.match(line))
        if not fenced:
            line = re.sub(r"^(\s*(?:(?:[-*+]|\d+\.)\s+)?)#(?=\d)", r"\1\\#", line)
            if in_list:
                line = re.sub(r"^ {2,3}(?=(?:[-*+]|\d+\.) )", "    ", line)
            marker = re.match(r"\s*(?:[-*+]|(\d+)\.) ", line)
            if marker and out and out[-1].strip() and not re.match(r"\s*(?:[-*+]|\d+\.) ", out[-1]) \
                    and (marker.group(1) in (None, "1") or in_list):
                out.append("")    # GitHub lets a list interrupt a paragraph; MkDocs wants a blank line
            if line.strip():
                in_list = bool(re.match(r"\s*(?:[-*+]|\d+\.) |\s", line))
        out.append(line)
    return "\n".join(out)


# ------------------------------------------------------------------ command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Make README.md's generated parts again.")
    parser.add_argument("--write", action="store_true", help="rewrite README.md with its parts made afresh")
    parser.add_argument("--check", action="store_true", help="exit 1 when README.md's parts are out of date")
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    made = fill(text, README)
    if args.write and made != text:
        README.write_text(made, encoding="utf-8")
        print("README.md: generated parts made again")
    elif made != text:
        print("README.md's generated parts are out of date: python scripts/docs_site.py --write")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
