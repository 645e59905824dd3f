"""Exit codes and the user-error exception.

At the bottom of the layers: ``cli.py`` maps exceptions to these codes, and ``commands/``
raise ``UsageError``, so both import this module and neither imports the other.
"""

EXIT_OK = 0             # success
EXIT_CHECK_FAILED = 1   # the input was fine, but a check failed (an invariant, a KV match)
EXIT_BAD_INPUT = 2      # bad usage or bad input: one line on stderr, nothing changed


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""
