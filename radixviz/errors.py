"""Exit codes, the user-error exception, and how an error quotes what a person typed.

At the bottom of the layers: ``cli.py`` maps exceptions to these codes, and ``commands/``
raise ``UsageError``, so both import this module and neither imports the other.

A message never repeats a typed value (or a file's content) whole: ``excerpt`` quotes a
short, escaped piece, and ``cli.py`` passes every one-line refusal through ``shorten_typed``,
so a 100,000-character argument is never echoed back, nor its escape sequences run.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

EXIT_OK = 0             # success
EXIT_CHECK_FAILED = 1   # the input was fine, but a check failed (an invariant, a KV match)
EXIT_BAD_INPUT = 2      # bad usage or bad input: one line on stderr, nothing changed

EXCERPT_CHARS = 16      # of a value in a message, by default
LONG_TYPED = 300       # a typed word up to this long is quoted whole (a path in a deep folder); longer: cut
TYPED_SHOWN = 40
MAX_MESSAGE = 500       # a one-line refusal, whatever put a value in it
# C0 and C1 control characters and DEL: a message printed to a terminal must not drive it
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """A short, quoted and escaped piece of ``text`` for an error message (control
    characters, quotes and non-printing characters escaped; cut with … past ``limit``)."""
    cut = text[:limit]
    shown = repr(cut)
    return shown[:-1] + "…" + shown[-1] if len(text) > limit else shown


def shorten_typed(message: str, typed: Iterable[str]) -> str:
    """``message`` with every long word of ``typed`` (the command line) cut to an excerpt,
    wherever it appears (as typed or as Python quoted it), control characters escaped and
    the whole at most ``MAX_MESSAGE`` characters: the last guard of every refusal. A long
    message loses its middle, not its end: the end names what to do next."""
    words = set()
    for word in typed:
        words.add(word)
        if word.startswith("-") and "=" in word:          # --port=999…
            words.add(word.partition("=")[2])
    for word in sorted((w for w in words if len(w) > LONG_TYPED), key=len, reverse=True):
        short = excerpt(word, TYPED_SHOWN)
        message = message.replace(repr(word), short).replace(word, short[1:-1])
    message = _CONTROL.sub(lambda m: repr(m.group())[1:-1], message)
    if len(message) <= MAX_MESSAGE:
        return message
    head = MAX_MESSAGE * 3 // 5
    return message[:head] + "…" + message[head + 1 - MAX_MESSAGE:]
