"""Where a learner's data lives: ``platformdirs.user_data_dir("radixviz")``, or
``$RADIXVIZ_DATA_DIR`` (``radixviz serve`` sets it to each student's own folder)."""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_VAR = "RADIXVIZ_DATA_DIR"


def data_dir() -> Path:
    """The folder of the progress file, autosaves and (served) the session's scripts."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir("radixviz", appauthor=False))
