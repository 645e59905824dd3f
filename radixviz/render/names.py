"""File names of exported steps: one rule for the app's ``e``/``E`` and ``export --all-steps``."""
from __future__ import annotations


def step_file_name(frame, fmt: str, total: int = 0) -> str:
    """``step-0031.svg`` for the step the status line calls 31 (at least four digits, more
    when ``total`` needs them, so the names sort in step order)."""
    digits = max(4, len(str(total)))
    return f"step-{frame.number:0{digits}d}.{fmt}"
