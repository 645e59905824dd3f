"""Graphviz exports of frames, returning the one line to notify the learner with."""
from __future__ import annotations

from pathlib import Path

from radixviz.render import graphviz
from radixviz.render.names import step_file_name


def _write(frame, path: Path) -> None:
    graphviz.write(frame, path, frame.marks)


def export_frame(frame, folder: Path) -> str:
    """Write ``folder/step-NNNN.svg`` (the step number the status line shows); return where
    it went or why it could not."""
    path = Path(folder) / step_file_name(frame, "svg")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(frame, path)
    except Exception as exc:  # noqa: BLE001 - any failure becomes one line in a notification
        return _failure(exc)
    return f"exported step {frame.number} to {path}"


def export_frames(frames, folder: Path, cancelled=lambda: False) -> str:
    """Write every frame into ``folder`` (stopping early if ``cancelled()``); return a
    one-line summary."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for done, frame in enumerate(frames):
            if cancelled():
                return f"export stopped after {done} of {len(frames)} steps ({folder}/)"
            _write(frame, folder / step_file_name(frame, "svg", len(frames)))
    except Exception as exc:  # noqa: BLE001
        return _failure(exc)
    return f"exported {len(frames)} steps to {folder}/"


def _failure(exc: Exception) -> str:
    # GraphvizError already reads as one line with the install hint when dot is missing
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"export failed: {text}"
