"""The stepper's files and ways out: ctrl+s, ctrl+o, e/E, and asking before work is lost.

The decisions and the writing are the model's (``radixviz.tui.sandbox_work``); this mixin
asks with dialogs and shows the outcome. In a served session (``app.serving``) a save and
an export reach the learner's browser as downloads (Textual's ``deliver_text`` and
``deliver_binary``, which textual-serve turns into a download) and opening picks from the
session's own folder: nothing typed names a path on the server.
"""
from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.worker import get_current_worker

from radixviz.render.names import step_file_name
from radixviz.tui.exports import export_frame, export_frames, failure, frame_svg, frames_zip
from radixviz.tui.sandbox_work import DEFAULT_NAME, KeepsWork, Restorable, SandboxWork
from radixviz.tui.screens.dialogs import AskPath, ConfirmLeave, ConfirmOverwrite, PickScript, RestoreWork

NOTHING_TO_EXPORT = "nothing to export yet: run an operation first (press :)"
NOTHING_TO_SAVE = "nothing to save yet: run an operation first (press :)"

if TYPE_CHECKING:   # mypy sees the Screen this is mixed into; nothing is added at run time
    from textual import getters
    from textual.screen import Screen as _Host

    from radixviz.script.frames import Frame
    from radixviz.script.parser import Op
    from radixviz.script.session import Session
    from radixviz.tui.app_base import RadixvizAppBase
    from radixviz.tui.stepper_model import Applied, StepperModel
    from textual.widgets import Input
else:
    _Host = object


class SandboxFiles(KeepsWork, _Host):
    """Mixed into StepperScreen, which provides ``model``, ``stepper_title``, ``export_dir``,
    ``ASK_BEFORE_LEAVING``, ``remember_position``, ``_applied`` and ``_show_error``."""

    if TYPE_CHECKING:   # StepperScreen's, declared so mypy sees them here
        app = getters.app(RadixvizAppBase)   # the screen runs in the radixviz app
        model: StepperModel | None
        stepper_title: str
        export_dir: Path
        ASK_BEFORE_LEAVING: bool

        @property
        def loaded(self) -> StepperModel: ...
        def remember_position(self) -> None: ...
        def _applied(self, applied: Applied, field: Input | None = None) -> None: ...
        def _show_error(self, message: str) -> None: ...

    sandbox_work: SandboxWork | None = None

    @property
    def kept_work(self) -> SandboxWork:
        """The sandbox's files, there from the moment its session loaded (``start_work``):
        the dialogs that use them open only after that."""
        if self.sandbox_work is None:
            raise RuntimeError("the session has not loaded: no sandbox files yet")
        return self.sandbox_work

    @property
    def holds_work(self) -> bool:
        """A sandbox the learner types into (not a lesson, nor a challenge)."""
        return self.ASK_BEFORE_LEAVING

    def start_work(self, session: Session) -> None:
        """The session has loaded: what it opened with is kept (nothing to lose yet); an
        empty sandbox offers the work a closed one left behind."""
        self.sandbox_work = SandboxWork(self.app.autosave_folder, self.app.session_folder)
        self.sandbox_work.keep(session.ops)
        if not self.holds_work or session.ops:
            return
        found = self.sandbox_work.restorable()
        if found is not None:
            self.app.push_screen(RestoreWork(found.operations, found.when),
                                 lambda answer: self._restore(found, answer))

    def _restore(self, found: Restorable, answer: str | None) -> None:
        if answer == "discard":
            self.kept_work.discard_autosave(found.path)
            self.notify("discarded the unsaved work", timeout=3)
        elif answer == "restore":
            applied = self.loaded.apply_ops(self.kept_work.restore(found), what="restored work")
            self._applied(applied)
            if applied.error is None:
                self.notify(f"restored {len(applied.records)} operation(s): save them with ctrl+s", timeout=5)

    def work_changed(self) -> None:
        """After any change to the operations: keep the unsaved ones in the autosave."""
        if self.sandbox_work is not None and self.holds_work and self.model is not None:
            self.sandbox_work.autosave(self.model.session.ops, buggy=self.model.session.initial_buggy,
                               title=self.stepper_title)

    # ------------------------------------------------------------------ saving

    def action_save_script(self, then: Callable[[], None] | None = None) -> None:
        """Ask for a name and write the session as a script ``radixviz run`` reads."""
        if self.model is None or self.sandbox_work is None:
            return
        if not self.model.session.records:
            self.notify(NOTHING_TO_SAVE, severity="warning")
            return
        self._ask_save_name(self.sandbox_work.suggested_name(), then)

    def _ask_save_name(self, suggestion: str, then: Callable[[], None] | None) -> None:
        hint = ("a name for the file your browser downloads (a copy stays in this session: ctrl+o)"
                if self.kept_work.served else "a file name; radixviz run and ctrl+o read it back")

        def named(typed: str | None) -> None:
            if typed:
                self._save_checked(typed, then)
        self.app.push_screen(AskPath("Save the session as a script", suggestion, hint, max_length=200), named)

    def _save_checked(self, typed: str, then: Callable[[], None] | None) -> None:
        path = self.kept_work.target(typed)
        if not self.kept_work.needs_overwrite(path):
            self._save_to(path, then)
            return

        def answered(replace: bool | None) -> None:
            if replace:
                self._save_to(path, then)
            else:
                self._ask_save_name(self.kept_work.free_alternative(path), then)
        self.app.push_screen(ConfirmOverwrite(path.name if self.kept_work.served else str(path)), answered)

    def _save_to(self, path: Path, then: Callable[[], None] | None = None) -> None:
        session = self.loaded.session
        try:
            text = self.kept_work.write(path, session.ops, buggy=session.initial_buggy,
                                   note=f"saved from the radixviz {self.stepper_title}")
        except (OSError, ValueError) as exc:
            self.notify(f"not saved: {getattr(exc, 'strerror', None) or exc}", severity="error", timeout=6)
            return
        count = len(session.records)
        if self.kept_work.served:
            self.app.deliver_text(io.StringIO(text), save_filename=path.name, mime_type="text/plain")
            self.notify(f"saved {count} operation(s): your browser downloads {path.name} "
                        "(a copy stays in this session: ctrl+o)", timeout=5)
        else:
            self.notify(f"saved {count} operation(s) to {path}", timeout=4)
        if then is not None:
            then()

    # ----------------------------------------------------------------- opening

    def action_open_script(self) -> None:
        """Ask for a script and run its operations after the ones already here."""
        if self.model is None or self.sandbox_work is None:
            return
        if self.sandbox_work.served:
            names = self.sandbox_work.scripts()
            if not names:
                self.notify("no scripts in this session yet: ctrl+s saves one here", severity="warning",
                            timeout=5)
                return
            self.app.push_screen(PickScript(names), self._open_picked)
            return
        suggestion = str(self.sandbox_work.saved_to or DEFAULT_NAME)
        self.app.push_screen(AskPath("Open a script", suggestion, "its operations run after the ones already here",
                                     accept=self.sandbox_work.read), self._run_opened)

    def _open_picked(self, name: str | None) -> None:
        if name:
            ops, error = self.kept_work.read(name)
            if error:
                self._show_error(error)
            else:
                self._run_opened(ops)

    def _run_opened(self, ops: list[Op] | None) -> None:
        if not ops:
            return
        applied = self.loaded.apply_ops(ops, what="script")
        self._applied(applied)
        if applied.error is None:
            self.notify(f"ran {len(applied.records)} operation(s) from the script", timeout=4)

    # ----------------------------------------------------------------- exports

    def action_export(self) -> None:
        if self.loaded.frame is None:
            self.notify(NOTHING_TO_EXPORT, severity="warning", timeout=4)
            return
        if self.app.serving:
            self._deliver_frames([self.loaded.frame], one=True)
            return
        self.notify(export_frame(self.loaded.frame, self.export_dir), timeout=6)

    def action_export_all(self) -> None:
        frames = list(self.loaded.frames)
        if not frames:
            self.notify(NOTHING_TO_EXPORT, severity="warning", timeout=4)
            return
        caps = self.app.caps
        if caps is not None and len(frames) > caps.export_frames:
            self.notify(f"export all sends at most {caps.export_frames} steps here (this session has "
                        f"{len(frames)}): e sends the step shown", severity="warning", timeout=6)
            return
        self.notify(f"exporting {len(frames)} frames…", timeout=2)
        if self.app.serving:
            self._deliver_frames(frames, one=False)
        else:
            self._export_all(frames)

    @work(thread=True, exclusive=True, group="export")
    def _export_all(self, frames: list[Frame]) -> None:
        worker = get_current_worker()   # leaving the app cancels it; stop between files
        message = export_frames(frames, self.export_dir, lambda: worker.is_cancelled)
        if worker.is_cancelled:
            return
        self.app.call_from_thread(self.notify, message, timeout=6)

    @work(thread=True, exclusive=True, group="export")
    def _deliver_frames(self, frames: list[Frame], one: bool) -> None:
        """Served: the SVG (``e``) or a zip of every step's SVG (``E``) as a download."""
        worker = get_current_worker()
        data: bytes | None
        try:
            if one:
                data, name, kind = frame_svg(frames[0]), step_file_name(frames[0], "svg"), "image/svg+xml"
            else:
                data = frames_zip(frames, lambda: worker.is_cancelled)
                name, kind = "radixviz-steps.zip", "application/zip"
        except Exception as exc:  # noqa: BLE001 - any failure becomes one line in a notification
            self.app.call_from_thread(self.notify, failure(exc), severity="error", timeout=6)
            return
        if data is None or worker.is_cancelled:
            return
        self.app.call_from_thread(self.app.deliver_binary, io.BytesIO(data), save_filename=name, mime_type=kind)
        self.app.call_from_thread(self.notify, f"your browser downloads {name}", timeout=5)

    # --------------------------------------------------------------- leaving

    def leave_then(self, go: Callable[[], None], where: str) -> None:
        """Leave by ``go()``: a lesson keeps its place; a sandbox whose operations changed
        since it was opened or saved asks first (save, leave or stay). Leaving on purpose
        drops the autosave; saving keeps the work in the file instead."""
        self.remember_position()
        unsaved = self.sandbox_work.unsaved(self.model.session.ops) if (
            self.holds_work and self.model is not None and self.sandbox_work is not None) else 0
        if not unsaved:
            go()
            return

        def answered(answer: str | None) -> None:
            if answer == "leave":
                self.kept_work.discard_autosave()
                go()
            elif answer == "save":
                self.action_save_script(then=go)
        self.app.push_screen(ConfirmLeave(unsaved, where), answered)
