"""Graphviz exports of frames: to files on this computer (returning the one line to notify
the learner with), or as bytes to deliver to a served session's browser."""
from __future__ import annotations

from typing import TYPE_CHECKING

import io
import zipfile
from pathlib import Path

from radixviz.render import graphviz
from radixviz.render.names import remove_stale_steps, step_file_name

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from radixviz.script.frames import Frame


def _write(frame: Frame, path: Path) -> None:
    graphviz.write(frame, path, frame.marks)


def frame_svg(frame: Frame) -> bytes:
    """One frame as SVG bytes (GraphvizError, one line, when dot fails)."""
    return graphviz.to_svg(frame)


def frames_zip(frames: Sequence[Frame], cancelled: Callable[[], bool] = lambda: False) -> bytes | None:
    """Every frame's SVG in one zip (``step-NNNN.svg``), or None if ``cancelled()``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for frame in frames:
            if cancelled():
                return None
            archive.writestr(step_file_name(frame, "svg", len(frames)), frame_svg(frame))
    return buffer.getvalue()


def export_frame(frame: Frame, folder: Path) -> str:
    """Write ``folder/step-NNNN.svg`` (the step number the status line shows); return where
    it went or why it could not."""
    path = Path(folder) / step_file_name(frame, "svg")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(frame, path)
    except Exception as exc:  # noqa: BLE001 - any failure becomes one line in a notification
        return failure(exc)
    return f"exported step {frame.number} to {path}"


def export_frames(frames: Sequence[Frame], folder: Path, cancelled: Callable[[], bool] = lambda: False) -> str:
    """Write every frame into ``folder`` (stopping early if ``cancelled()``), then remove the
    higher-numbered steps an earlier, longer export left there; return a one-line summary."""
    folder = Path(folder)
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for done, frame in enumerate(frames):
            if cancelled():
                return f"export stopped after {done} of {len(frames)} steps ({folder}/)"
            path = folder / step_file_name(frame, "svg", len(frames))
            _write(frame, path)
            written.append(path)
        stale = remove_stale_steps(folder, written, "svg")
    except Exception as exc:  # noqa: BLE001
        return failure(exc)
    note = f"; removed {len(stale)} older step file(s)" if stale else ""
    return f"exported {len(frames)} steps to {folder}/{note}"


def failure(exc: Exception) -> str:
    """``export failed: …`` in one line."""
    # GraphvizError already reads as one line with the install hint when dot is missing
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"export failed: {text}"
