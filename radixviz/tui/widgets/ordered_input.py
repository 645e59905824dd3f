"""A text input that takes a burst of keys in the order they were typed.

Textual runs key bindings only once a key has bubbled back up to the app, while an input
types a letter the moment it receives it; and it hands every key to the widget that had the
focus when the key arrived. Keys that arrive together (a browser sends a burst in one packet;
a busy machine lets keys queue up) were then applied out of order: ``ctrl+a ctrl+k ~/notes``
typed fast cleared the name *after* it was typed, a backspace could delete a later letter.
Here each key's binding runs when the key reaches the input, in line with the letters; a key
queued here before ``esc`` or ``enter`` moved the focus goes on to where the focus is now.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.binding import Binding
from textual.widgets import Input

if TYPE_CHECKING:
    from textual.app import App
    from textual.dom import DOMNode
    from typing import Any


def bindings_for(node: DOMNode, key: str) -> tuple[Binding, ...]:
    """The bindings ``node`` itself declares for ``key`` (not its ancestors'). Textual offers
    no public lookup by key: this is one of the two places that read its private binding map."""
    return tuple(node._bindings.key_to_bindings.get(key, ()))


async def run_key_bindings(app: App[Any], key: str) -> bool:
    """Run ``key``'s non-priority binding as the app would on the key's way back up: from the
    focused widget (as focused now) up to the screen and the app. Whether one ran. Textual
    does this only in its private ``App._check_bindings``; the other reader of its map."""
    return await app._check_bindings(key)


class OrderedInput(Input):
    """An Input whose editing keys (backspace, ctrl+k, home, enter, esc…) act in typing order."""

    async def _on_key(self, event: events.Key) -> None:
        if self.screen is not self.app.screen or self.screen.focused is not self:
            # queued here before the focus moved on (``esc`` closed the field, ``enter`` a
            # dialog): the key belongs to what has the focus now
            event.stop()
            event.prevent_default()
            self.app.post_message(events.Key(event.key, event.character))
            return
        if event.is_printable:
            return   # Input types it
        event.stop()
        event.prevent_default()   # neither Input's handler nor the app runs it again
        await run_key_bindings(self.app, event.key)
