"""Command line entry point: parse, dispatch, map errors to exit codes. No logic lives here."""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from radixviz import __version__
from radixviz.commands import COMMAND_MODULES
from radixviz.errors import EXIT_BAD_INPUT, EXIT_CHECK_FAILED, UsageError, shorten_typed


class OneLineParser(argparse.ArgumentParser):
    """argparse prints usage plus the error; ours is one line, pointing at --help.

    Abbreviated options are off: ``--step 3`` must never be read as ``--steps`` plus a
    stray ``3`` (subparsers are built with this class, so this holds for every command)."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        # argparse quotes the value it refused (an invalid choice, an unknown argument) whole
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {shorten_typed(message, _typed())} (see {self.prog} --help)\n")


# a command whose name is not its module's (``verify-kv`` is verify_kv's): name -> module
OTHER_NAMES = {"challenge": "challenges"}


def command_module(argv: list[str]) -> str | None:
    """The one command module a command line needs: its first word names a command
    (``radixviz sandbox ...``), or it is empty (the home screen). None for anything else
    (``--help``, ``--debug sandbox``, a mistyped command): those get every command."""
    if not argv:
        return "home" if "home" in COMMAND_MODULES else None
    word = argv[0]
    name = OTHER_NAMES.get(word) or ("" if "_" in word else word.replace("-", "_"))
    return name if name in COMMAND_MODULES else None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser, or only the module ``only``'s: the app's first paint waits for
    the imports of every module built (0.1-0.2 s for all of them, bench/first_paint.py)."""
    # subparsers are made with the same class, so every command's errors are one line too
    parser = OneLineParser(
        prog="radixviz",
        description="Watch SGLang's RadixAttention cache work, step by step.")
    parser.add_argument("--version", action="version", version=f"radixviz {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES if only is None else [only]:
        importlib.import_module(f"radixviz.commands.{name}").register(subparsers)
    return parser


_TYPED: list = []


def _typed() -> list:
    """The words of this command line (``main``'s, else the process's)."""
    return _TYPED or sys.argv[1:]


def one_torch_thread() -> None:
    """Run torch's operations on one thread unless the user set a count (OMP_NUM_THREADS).

    Every tensor here is small (a pool of at most a few million slots, a few thousand
    slots a step), so torch's default of a thread per core only splits tiny operations
    and makes the threads wait on each other: on a busy 2-core machine a 10,000-request
    trace took 162 s of CPU that way and 29 s on one thread, with the same results
    (docs/benchmarks.md). Set before torch is imported, which reads it once."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch = sys.modules.get("torch")   # already loaded (a caller imported it first): tell it too
    if torch is not None and os.environ["OMP_NUM_THREADS"] == "1":
        torch.set_num_threads(1)


def main(argv: list[str] | None = None) -> None:
    one_torch_thread()
    _TYPED[:] = sys.argv[1:] if argv is None else [str(a) for a in argv]
    parser = build_parser(command_module(_TYPED))
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["home" if "home" in COMMAND_MODULES else "demo"])
    try:
        code = args.func(args)
    except UsageError as exc:
        print(f"radixviz: {shorten_typed(str(exc), _typed())}", file=sys.stderr)
        code = EXIT_BAD_INPUT
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        # the reader went away (``radixviz run … | head``): stop quietly, and keep Python
        # from complaining again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_CHECK_FAILED
    except MemoryError:
        if args.debug:
            raise
        # its message is empty: say what ran out, as a user error (the input was too big)
        print(f"radixviz: error: out of memory running {args.command or 'radixviz'}: the input is "
              "too large for this machine's memory", file=sys.stderr)
        code = EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 - one clear line unless --debug
        if args.debug:
            raise
        said = str(exc) or type(exc).__name__    # never an empty message
        print(f"radixviz: error: {shorten_typed(said, _typed())} (run with --debug for the traceback)",
              file=sys.stderr)
        code = EXIT_BAD_INPUT if isinstance(exc, (ValueError, OSError)) else EXIT_CHECK_FAILED
    sys.exit(code or 0)
