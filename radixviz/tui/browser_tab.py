"""What the app does differently in a browser tab (``radixviz serve``), where the mouse and
the downloads are the browser's.

- A click on the footer's palette key does not open the palette: the click that gave the
  page the focus opened it, and the palette then took the keys typed next; ctrl+p opens it
  from the keyboard (issue 51).
- A file delivered to the browser (a saved script, an export) is kept in the app until the
  browser has fetched it, as Textual does; but one never fetched (a tab that blocks
  downloads, a client that ignores them) is dropped after ``DELIVERY_SECONDS``, and at most
  ``MAX_DELIVERIES`` wait at once: 150 saves nobody fetched held 65 MB (issue 53).
"""
from __future__ import annotations

import contextlib
from collections import deque
from typing import TYPE_CHECKING, Any

from textual.app import App

from radixviz.settings import SERVED_CAPS

# a browser asks for its download at once: a minute is room for a slow one; a newer one
# drops the oldest past the count (the server keeps the same count: textual_serve_adapter)
DELIVERY_SECONDS, MAX_DELIVERIES = SERVED_CAPS.delivery_seconds, SERVED_CAPS.deliveries


class BrowserTab(App):
    """Mixed into the radixviz app before its base; ``serving`` says whether it is a tab."""

    if TYPE_CHECKING:   # the app's own property (app.py)
        @property
        def serving(self) -> bool: ...
    _waiting: deque | None = None

    def simulate_key(self, key: str) -> None:
        if self.serving and key == self.COMMAND_PALETTE_BINDING:
            self.notify("ctrl+p opens the command palette", timeout=3)
            return
        super().simulate_key(key)

    def deliver_text(self, *args: Any, **kwargs: Any) -> str | None:
        return self._bounded(super().deliver_text(*args, **kwargs))

    def deliver_binary(self, *args: Any, **kwargs: Any) -> str | None:
        return self._bounded(super().deliver_binary(*args, **kwargs))

    def _bounded(self, key: str | None) -> str | None:
        """Drop ``key``'s delivery if still waiting after DELIVERY_SECONDS, and the oldest
        waiting one past MAX_DELIVERIES."""
        if key is None or not self.serving:
            return key
        if self._waiting is None:
            self._waiting = deque()
        self._waiting.append(key)
        while len(self._waiting) > MAX_DELIVERIES:
            self.drop_delivery(self._waiting.popleft())
        self.set_timer(DELIVERY_SECONDS, lambda: self.drop_delivery(key))
        return key

    def drop_delivery(self, key: str) -> bool:
        """Forget a delivery the browser has not fetched (True if one was waiting). The web
        driver keeps them in ``_deliveries``, and removes each once fetched."""
        if self._waiting is not None and key in self._waiting:
            self._waiting.remove(key)
        waiting = getattr(self._driver, "_deliveries", None)
        if not isinstance(waiting, dict) or key not in waiting:
            return False
        with contextlib.suppress(Exception):
            waiting.pop(key).close()
        return True
