"""Keys that arrive before the screen can act on them: kept in order, never lost.

Two moments lose keys otherwise:

- while the engine loads (torch takes a second or more), the stepping keys are disabled: a
  person who presses → or types ``:insert abc`` at once saw nothing happen;
- a burst of keys (typed fast, sent in one packet by a browser, replayed from the first
  case) right after ``:``: Textual hands every queued key to the screen before the input
  takes the focus, so the letters acted as stepper keys (``s`` opened the node picker).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import asyncio

from textual import events

from radixviz.tui.widgets.ordered_input import bindings_for

if TYPE_CHECKING:
    from typing import Any
    from textual.screen import Screen


def bound_action(screen: Screen[Any], key: str) -> str | None:
    """The name of the action ``key`` runs on ``screen`` (its arguments cut off), or None."""
    for binding in bindings_for(screen, key):
        return binding.action.split("(", 1)[0]
    return None


class EarlyKeys:
    """Holds keys for a screen until it is ready, then sends them again as if typed now."""

    def __init__(self) -> None:
        self.held: list[tuple[str, str | None]] = []

    def hold_until_ready(self, screen: Screen[Any], event: events.Key, acts_now: frozenset) -> bool:
        """While ``screen`` is not ready: keep ``event`` (True) unless it runs an action in
        ``acts_now`` and nothing is held yet (help, home and quit work at once; once a key
        is held, later ones wait behind it, so ``:match h`` keeps its h)."""
        if not self.held and bound_action(screen, event.key) in acts_now | {None}:
            return False
        self.keep(event)
        return True

    def keep(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        self.held.append((event.key, event.character))

    async def release(self, app) -> None:
        """Send the held keys to ``app`` in the order they were pressed, each once the one
        before has done what it does (a binding runs only when its key has gone from the app
        to the screen and back: a burst would let ``:`` open the input ahead of the → keys
        pressed before it, and the input would take them)."""
        held, self.held = self.held, []
        for key, character in held:
            app.post_message(events.Key(key, character))
            await settled(app)


async def settled(app) -> None:
    """Return once the key just posted to ``app`` has travelled its whole way: the app hands
    it to the focused widget (or the screen), it bubbles to the screen and back to the app,
    whose bindings run it. Each hop is waited for in the queue of the one that handles it."""
    for hop in range(4):
        if hop == 0 or hop == 3:
            pump = app
        elif hop == 1:
            pump = app.focused or app.screen
        else:
            pump = app.screen
        done = asyncio.Event()
        if not pump.call_later(done.set):
            return   # closing: nothing more will be handled
        await done.wait()


def to_open_input(field, event: events.Key) -> bool:
    """A printable key that reached the screen while ``field`` (an input) is open: it was
    queued before the field took the focus. Type it into the field, as the field itself
    does (True). Other keys (enter, esc) go on to the bindings, which now start at the
    field, after the letters before them."""
    if not field.display or not event.is_printable:
        return False
    event.stop()
    event.prevent_default()
    selection = field.selection
    if selection.is_empty:
        field.insert_text_at_cursor(event.character)
    else:
        field.replace(event.character, *selection)
    return True
