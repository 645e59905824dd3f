"""The learner's progress, one JSON file in the data folder: ``Progress.load()``, and the
updates each player makes (``progress``); the file's schema, reading and lock
(``progress_file``); where the data folder is (``places``, ``$RADIXVIZ_DATA_DIR``).
"""
from .places import ENV_VAR, data_dir
from .progress import (Progress, ProgressError, mark_lesson_completed, save_lesson_completed, save_lesson_position,
                       update_progress)

__all__ = ["ENV_VAR", "Progress", "ProgressError", "data_dir", "mark_lesson_completed", "save_lesson_completed",
           "save_lesson_position", "update_progress"]
