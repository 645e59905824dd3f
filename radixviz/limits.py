"""Bounds for the numbers a person types (``Limit``), with no import of radixviz: the lowest
layer, so the engine registry (radixviz/cache/engines.py) declares its options' limits with
the same class the command line and the app's forms use. settings.py holds the other limits
and re-exports these.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

from radixviz.errors import excerpt


@dataclass(frozen=True)
class Limit:
    """A whole number from ``low`` to ``high``; ``label`` names it in a refusal."""
    label: str
    low: int
    high: int
    default: int | None = None

    def parse(self, raw) -> int:
        """The number in ``raw`` (an int or text such as ``" 1_024 "``); ValueError with a
        message to put after the label (``must be between 1 and 500, not 0``) otherwise."""
        try:
            value = int(str(raw).strip())
        except ValueError:
            raise ValueError(f"must be a whole number, not {excerpt(str(raw))}") from None
        if not self.low <= value <= self.high:
            raise ValueError(f"must be between {self.low} and {self.high}, not {value}")
        return value

    def check(self, raw) -> int:
        """``parse``, with the label in front of the message."""
        try:
            return self.parse(raw)
        except ValueError as exc:
            raise ValueError(f"{self.label} {exc}") from None

    @property
    def arg(self):
        """An argparse ``type=``: a refusal is argparse's one line, ``argument --x: must ...``."""
        return arg_type(self.parse)


def arg_type(check):
    """An argparse ``type=`` from ``check(text) -> value``, which raises ValueError with the
    words to show; argparse prints them after ``argument --flag:`` and exits 2."""
    def parse_arg(text: str):
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse_arg.__name__ = getattr(check, "__name__", "value")
    return parse_arg


# Tokens per page of an engine with pages (engine 2026): the one rule the script's
# ``page-size N``, ``run``/``export``/``sandbox --page-size`` and ``simulate --page-size`` and
# ``--sweep page=`` share. SGLang's own are powers of two up to a few hundred; past a pool or
# a context length a page just caches nothing, which a lesson may want to show.
PAGE_SIZE = Limit("page size", 1, 4096, default=1)

# The host tier's pool (engine hicache: ``host-size N``, ``--host-size``, ``--sweep host=``);
# it must also be larger than the device pool, as SGLang requires (checked where both are known)
HOST_SLOTS = Limit("host size", 2, 1 << 24)
