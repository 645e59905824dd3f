"""File names of exported steps: one rule for the app's ``e``/``E`` and ``export --all-steps``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import re
from pathlib import Path

if TYPE_CHECKING:
    from collections.abc import Iterable
    from ..script.frames import Frame


def step_file_name(frame: Frame, fmt: str, total: int = 0) -> str:
    """``step-0031.svg`` for the step the status line calls 31 (at least four digits, more
    when ``total`` needs them, so the names sort in step order)."""
    digits = max(4, len(str(total)))
    return f"step-{frame.number:0{digits}d}.{fmt}"


def remove_stale_steps(folder: Path, written: Iterable[Path], fmt: str) -> list[Path]:
    """Delete the ``step-NNNN.FMT`` files in ``folder`` that this export did not write (an
    earlier, longer run's higher-numbered steps, which would read as part of this one);
    return them. Only names of exactly that shape are touched."""
    keep = {Path(p).name for p in written}
    shape = re.compile(rf"step-\d{{4,}}\.{re.escape(fmt)}")
    stale = [p for p in Path(folder).iterdir() if shape.fullmatch(p.name) and p.name not in keep and p.is_file()]
    for path in stale:
        path.unlink()
    return stale
