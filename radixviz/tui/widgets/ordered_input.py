"""A text input that takes a burst of keys in the order they were typed.

Textual runs a widget's key bindings only once the key has bubbled back up to the app, while
the input types a letter the moment it receives it. Keys that arrive together (a browser
sends a burst in one packet; a busy machine lets keys queue up) are then applied out of order:
``ctrl+a ctrl+k ~/notes`` typed fast cleared the name *after* it was typed, and a backspace
could delete a later letter. Here the input's own bindings run when the key reaches it, in
line with the letters.
"""
from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.widgets import Input


def bindings_for(node, key: str) -> tuple[Binding, ...]:
    """The bindings ``node`` itself declares for ``key`` (not its ancestors'). Textual offers
    no public lookup by key: this is the one place that reads its private binding map."""
    return tuple(node._bindings.key_to_bindings.get(key, ()))


class OrderedInput(Input):
    """An Input whose editing keys (backspace, ctrl+k, home, enter…) act in typing order."""

    async def _on_key(self, event: events.Key) -> None:
        if event.is_printable:
            return   # Input types it
        for binding in bindings_for(self, event.key):
            if not binding.priority:   # a priority binding already ran on the way down
                event.stop()
                event.prevent_default()   # neither Input's handler nor the app runs it again
                await self.run_action(binding.action)
                return
