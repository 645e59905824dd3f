"""A 100,000-character value on any command line is refused in one short line: the error
quotes a short, escaped excerpt of what was typed (``radixviz.errors.excerpt``), never the
whole value, and never its escape sequences (which would drive the terminal)."""
from __future__ import annotations

import argparse

import pytest

from radixviz import cli
from radixviz.cli import build_parser, main
from radixviz.errors import UsageError

# an OSC sequence that would retitle the terminal, then a long tail
HOSTILE = "\x1b]0;pwned\x07" + "x" * 100_000
DIGITS = "9" * 5000
MOST = 600            # characters of the one line, whatever the value


def refusal(capsys, argv) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err[:300]
    return err


def assert_short(err: str, typed: str) -> None:
    assert len(err.strip().splitlines()) == 1, err[:300]
    assert len(err) < MOST, f"{len(err)} characters: {err[:300]}"
    assert "\x1b" not in err and "\x07" not in err
    assert typed[12:20] not in err or "…" in err      # the value, if quoted at all, is cut


@pytest.mark.parametrize("argv", [
    ["serve", "--port", DIGITS],
    ["run", "--host-size", DIGITS],
    ["run", f"--pool-size={DIGITS}"],
    ["lessons", "--done", HOSTILE],
    ["lessons", "--read", HOSTILE],
    ["lesson", HOSTILE],
    ["serve", HOSTILE],
    ["quiz", "--lesson", HOSTILE],
    ["challenge", HOSTILE],
    ["serve", "--code", HOSTILE],
    ["serve", "--lessons", HOSTILE],
    ["run", HOSTILE],
    ["verify-kv", HOSTILE],
    ["run", "-e", HOSTILE],
    ["simulate", "--workload", HOSTILE],
    ["simulate", "--sweep", HOSTILE],
    ["simulate", "--trace", HOSTILE],
    ["progress", "--import", HOSTILE],
    [HOSTILE],
    ["run", "--" + HOSTILE],
], ids=lambda argv: " ".join(a[:12].encode("unicode_escape").decode() for a in argv))
def test_a_long_value_is_quoted_short(capsys, argv):
    assert_short(refusal(capsys, argv), argv[-1])


def options_that_check_their_value():
    """Every option of every command that argparse checks (a type or choices)."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, sub in commands.items():
        for action in sub._actions:
            if action.option_strings and action.nargs != 0 and (action.type or action.choices):
                yield name, action.option_strings[-1]


@pytest.mark.parametrize("command, option", list(options_that_check_their_value()))
def test_every_checked_option_quotes_a_long_value_short(capsys, command, option):
    with pytest.raises(SystemExit):          # refused while parsing: main will run nothing
        build_parser().parse_args([command, option, HOSTILE])
    capsys.readouterr()
    assert_short(refusal(capsys, [command, option, HOSTILE]), HOSTILE)


def options_taking_any_text():
    """Every option of every command that takes a value argparse does not check (a path, a
    name, a topic): the command itself refuses it, if at all."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, sub in commands.items():
        needed = [a for a in sub._actions if not a.option_strings and a.nargs not in ("?", "*")]
        for action in sub._actions:
            if action.option_strings and action.nargs != 0 and not (action.type or action.choices):
                yield name, action.option_strings[-1], len(needed)


@pytest.mark.parametrize("command, option, positionals", list(options_taking_any_text()))
@pytest.mark.parametrize("error", [UsageError, ValueError])
def test_a_command_refusing_any_option_quotes_it_short(capsys, monkeypatch, command, option, positionals, error):
    # whatever a command's refusal says of the value (as typed, or as Python quotes it), the
    # line that reaches the terminal quotes a short excerpt: cli's last guard covers every
    # command and option, not only those listed above
    built = build_parser

    def refusing(*args, **kwargs):
        parser = built(*args, **kwargs)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]

        def refuse(parsed):
            value = getattr(parsed, next(a.dest for a in sub._actions if option in a.option_strings))
            raise error(f"{option} {value}: not usable ({value!r})")
        sub.set_defaults(func=refuse)
        return parser
    monkeypatch.setattr(cli, "build_parser", refusing)
    assert_short(refusal(capsys, [command, option, HOSTILE, *["1"] * positionals]), HOSTILE)


def test_a_message_over_the_limit_keeps_its_end():
    # the end of a refusal says what to do next ("(every problem: radixviz lessons --check DIR)"):
    # a message too long loses its middle
    from radixviz.errors import MAX_MESSAGE, shorten_typed
    message = "bad.md:20: unknown operation 'frob' (operations: " + "op, " * 200 + ") (every problem: fix it)"
    short = shorten_typed(message, [])
    assert len(short) == MAX_MESSAGE and "…" in short
    assert short.startswith("bad.md:20: unknown operation 'frob'") and short.endswith("(every problem: fix it)")
