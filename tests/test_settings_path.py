"""An engine's settings reach it whole and short (issue 50): from ``radixviz run``'s flag to the
engine, ``page_size`` takes at most four hops (argparse, the edge that makes the settings
object, the session, the engine) in one form after parsing: one settings object, a
``@dataclass(frozen=True, slots=True)`` made from the engine's declared options and checked
once, in its ``__post_init__`` (cache/options.py ``EngineSettings``), handed on as that very
object. docs/architecture.md draws the path.

Measured as the program runs, not read from the source as tests/test_layers.py reads imports:
a profile hook notes every radixviz function that *receives* the page size (an argument named
``page_size``, a mapping or settings object holding it, or an object whose fields hold it: the
parsed arguments) between ``commands/run.py`` and the first call of the engine's cache
constructor. Before stage 2 the value went through 12 hops in six forms (main 7504d5e); a new
hop that re-packs it fails here, with the route.
"""
from __future__ import annotations

import argparse
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
MOST_HOPS = 4


def _holds_page(value) -> bool:
    if isinstance(value, type):
        return False
    if isinstance(value, EngineSettings):   # slots: no __dict__
        return getattr(value, "page_size", None) == PAGE
    if isinstance(value, Mapping):
        return value.get("page_size") == PAGE
    fields = getattr(value, "__dict__", None)
    return isinstance(fields, dict) and fields.get("page_size") == PAGE


def route(argv: list[str]) -> list[tuple[str, str, object]]:
    """(file, function, what holds the page size there) of each call that received it, from
    the command to the engine's cache (whose constructor gets the int itself)."""
    calls: list[tuple[str, str, object]] = []
    reached = [False]

    def profile(frame, event, arg):
        if event != "call" or reached[0]:
            return
        code = frame.f_code
        path = Path(code.co_filename)
        if not path.is_relative_to(PACKAGE):
            return
        where = (str(path.relative_to(PACKAGE)), code.co_name)
        count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        received = {name: frame.f_locals.get(name) for name in code.co_varnames[:count] if name != "self"}
        if where == (END, "__init__"):
            reached[0] = True
            calls.append((*where, received.get("page_size")))
            return
        for name, value in received.items():
            if (name == "page_size" and value == PAGE) or _holds_page(value):
                calls.append((*where, value))
                break

    before = sys.getprofile()
    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit):
            main(argv)
    finally:
        sys.setprofile(before)
    start = next(i for i, (file, _, _) in enumerate(calls) if file == START)
    return calls[start:]


def _after_parsing(calls: list) -> list:
    """The calls from the first that holds something other than argparse's Namespace."""
    first = next(i for i, (_, _, held) in enumerate(calls) if not isinstance(held, argparse.Namespace))
    return calls[first:]


ARGV = ["run", "--engine", "2026", "--page-size", str(PAGE), "-e", 'insert "abcdefgh"']


def test_page_size_reaches_the_engine_in_four_hops():
    calls = route(ARGV)
    assert calls[-1][:2] == (END, "__init__") and calls[-1][2] == PAGE, f"never reached the cache: {calls}"
    parsed = [(file, function) for file, function, held in calls if isinstance(held, argparse.Namespace)]
    edge = ("commands/engine_args.py", "engine_settings")   # where the settings object is made, from the flags
    assert edge in parsed, parsed
    after = [(file, function) for file, function, _ in _after_parsing(calls)[:-1]]
    # argparse, the edge, then each receiver of the settings object up to the engine
    hops = ["argparse", edge, *dict.fromkeys(after)]
    assert len(hops) <= MOST_HOPS, f"page_size now takes {len(hops)} hops (at most {MOST_HOPS}): {hops}"
    assert hops[2:] == [("script/session.py", "__init__"), ("cache/facade.py", "__init__")]


def test_after_parsing_it_has_one_form_the_same_object_to_the_engine():
    carried = [held for _, _, held in _after_parsing(route(ARGV))[:-1]]
    assert carried and all(held is carried[0] for held in carried), carried   # one object, never re-made
    settings = carried[0]
    assert isinstance(settings, EngineSettings) and not hasattr(settings, "__dict__")   # slots
    assert settings.page_size == PAGE and settings["eviction_policy"] == "lru" and settings.pool_size == 128
    with pytest.raises(AttributeError):   # frozen: a live change makes a new one (replace)
        settings.page_size = 1


def test_the_object_is_checked_where_it_is_made():
    settings_type = type(route(ARGV)[-2][2])
    with pytest.raises(ValueError, match="page size must be between 1 and 4096, not 0"):
        settings_type(16, page_size=0)
    with pytest.raises(ValueError, match="unknown eviction policy 'nope'"):
        settings_type(16, eviction_policy="nope")
    assert settings_type(16, page_size=2).replace(page_size=4).page_size == 4
    with pytest.raises(ValueError, match="page size must be a whole number"):
        settings_type(16).replace(page_size="4")
