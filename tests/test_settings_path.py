"""An engine's settings reach it whole and short: from ``radixviz run``'s flags to the engine's
cache, ``page_size`` passes through at most three files, as one frozen settings object made
from the engine's declared options (cache/options.py ``EngineSettings``).

Measured as the program runs, not read from the source as tests/test_layers.py reads imports:
a profile hook notes every radixviz function that *receives* the page size (an argument named
``page_size``, a mapping holding it, or an object whose fields hold it: the parsed
arguments) between ``commands/run.py`` and the first call of the engine's cache constructor.
Before the settings were typed (main 5956ca6) the value went through four files in five
dicts (engine_args.py, engines.py twice re-packing it, session.py, facade.py); a new hop that
re-packs it fails here, with the route.
"""
from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

import radixviz
from radixviz.cache.options import EngineSettings
from radixviz.cli import main

PACKAGE = Path(radixviz.__file__).resolve().parent
PAGE = 7                               # a page size no default has, so a match is this run's
START, END = "commands/run.py", "engines/v2026/cache.py"
MOST_FILES = 3


def _holds_page(value) -> bool:
    if isinstance(value, Mapping):
        return value.get("page_size") == PAGE
    fields = getattr(value, "__dict__", None)
    return isinstance(fields, dict) and not isinstance(value, type) and fields.get("page_size") == PAGE


def route(argv: list[str]) -> tuple[list[tuple[str, str]], list]:
    """(file, function) of each call that received the page size, from the command to the
    engine's cache, and the settings objects the engine's constructor got."""
    calls: list[tuple[str, str]] = []
    handed: list = []
    reached = [False]

    def profile(frame, event, arg):
        if event != "call" or reached[0]:
            return
        code = frame.f_code
        path = Path(code.co_filename)
        if not path.is_relative_to(PACKAGE):
            return
        where = (str(path.relative_to(PACKAGE)), code.co_name)
        if where == (END, "__init__"):
            reached[0] = True
            calls.append(where)
            return
        count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        received = {name: frame.f_locals.get(name) for name in code.co_varnames[:count] if name != "self"}
        if where == ("cache/facade.py", "__init__"):
            handed.append(received.get("settings"))
        if any((name == "page_size" and value == PAGE) or _holds_page(value) for name, value in received.items()):
            calls.append(where)

    before = sys.getprofile()
    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit):
            main(argv)
    finally:
        sys.setprofile(before)
    start = next(i for i, (file, _) in enumerate(calls) if file == START)
    return calls[start:], handed


def test_page_size_reaches_the_engine_through_three_files_at_most():
    calls, _ = route(["run", "--engine", "2026", "--page-size", str(PAGE), "-e", 'insert "abcdefgh"'])
    assert calls[-1] == (END, "__init__"), f"the run never reached the engine's cache: {calls}"
    between = [file for file in dict.fromkeys(file for file, _ in calls) if file not in (START, END)]
    assert len(between) <= MOST_FILES, (
        f"page_size now passes through {len(between)} files between {START} and {END} (at most "
        f"{MOST_FILES}): {' -> '.join(between)}; calls: {calls}")


def test_the_engine_gets_one_frozen_typed_object():
    _, handed = route(["run", "--engine", "2026", "--page-size", str(PAGE), "-e", 'insert "abcdefgh"'])
    assert handed and all(isinstance(settings, EngineSettings) for settings in handed), handed
    settings = handed[0]
    assert settings.page_size == PAGE and settings["eviction_policy"] == "lru"
    with pytest.raises(AttributeError):   # frozen: the engine keeps its own working copy
        settings.page_size = 1
