"""The command line builds only the parser of the command it names (the app's first paint
waits for the imports of every command module built), and that parser reads it as the full
one does."""
from __future__ import annotations

import argparse

import pytest

from radixviz.cli import build_parser, command_module
from radixviz.commands import COMMAND_MODULES


def _choices(parser: argparse.ArgumentParser) -> dict:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_every_command_name_finds_its_module(module):
    names = list(_choices(build_parser(module)))
    assert names, module
    assert all(command_module([name, "--help"]) == module for name in names), names


def test_the_full_parser_has_every_name_once():
    full = _choices(build_parser())
    by_module = [name for module in COMMAND_MODULES for name in _choices(build_parser(module))]
    assert sorted(full) == sorted(by_module)


@pytest.mark.parametrize("argv", [["--help"], ["--debug", "sandbox"], ["sandbx"], ["verify_kv"],
                                  ["why_miss"], ["-h"]])
def test_anything_else_gets_every_command(argv):
    # an option first, a typo or a module's own spelling: the full parser says what is wrong
    assert command_module(argv) is None


def test_an_empty_line_is_the_home_screen():
    assert command_module([]) == "home"


@pytest.mark.parametrize("argv", [["sandbox", "--pool-size", "16", "--device", "cpu"],
                                  ["challenge", "evict-short"], ["simulate", "--app"],
                                  ["lesson", "1"], ["verify-kv", "--help"][:1]])
def test_one_command_parses_as_the_full_parser_does(argv):
    one = vars(build_parser(command_module(argv)).parse_args(argv))
    full = vars(build_parser().parse_args(argv))
    assert {k: v for k, v in one.items() if k != "func"} == {k: v for k, v in full.items() if k != "func"}
    assert one["func"] == full["func"]
