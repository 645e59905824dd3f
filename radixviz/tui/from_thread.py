"""A coroutine method run on the app's loop from a worker thread, typed so mypy checks it."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from textual.app import App


def call_from_thread(app: App, callback: Callable[..., Awaitable[None]], *args: Any) -> None:
    """``app.call_from_thread(callback, *args)`` for a coroutine function: it runs on the app's
    loop and this thread waits until it is done. Textual types the callback ``R | Awaitable[R]``,
    which mypy solves to Never for a coroutine alone; the cast says what Textual does with it."""
    app.call_from_thread(cast(Callable[..., Any], callback), *args)
