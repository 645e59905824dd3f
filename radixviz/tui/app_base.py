"""What the screens may ask of the radixviz app, declared below the screens.

``RadixvizApp`` (app.py) opens every screen, so a screen that typed its ``self.app`` by that
class would import app.py back and make a circle. The screens type it by this base instead;
app.py's class builds on it and gives each member its body. Nothing is added at run time:
the declarations are for mypy only, as cache_transfers.py declares what HiRadixCache sets.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from radixviz.settings import SessionCaps


class RadixvizAppBase(App):
    if TYPE_CHECKING:   # RadixvizApp's own (app.py)
        pool_size: int

        @property
        def serving(self) -> bool: ...

        @property
        def caps(self) -> SessionCaps | None: ...

        @property
        def session_folder(self) -> Path | None: ...

        @property
        def autosave_folder(self) -> Path: ...

        def action_quit(self) -> None: ...   # type: ignore[override]   # sync, as app.py's

        def after_first_paint(self, callback: Callable[[], Any]) -> None: ...

        def open_sandbox(self, script: str | None = None, script_text: str | None = None,
                         title: str = "sandbox", screen_class: Any = None) -> None: ...

        def open_lesson(self, lesson: Any) -> None: ...

        def open_challenges(self) -> None: ...

        def open_challenge(self, challenge: Any) -> None: ...

        def open_home(self) -> None: ...

        def open_quiz(self, **options: Any) -> None: ...

        def open_scheduler(self, **options: Any) -> None: ...
