"""What a served tab sends over its websocket, read defensively: textual-serve's page sends
five kinds of JSON message (``stdin``, ``resize``, ``ping``, ``blur``, ``focus``); anything
else is a frame the protocol does not expect, from a hostile client, not a browser.

Such a frame (not JSON, JSON nested deep enough to raise ``RecursionError``, a binary
frame, an unknown kind, data of the wrong type) is dropped and the session goes on. The
first one of a session is logged in one line; the others are counted and their number
logged when the session ends, so a flood of them cannot flood the teacher's terminal.

A frame the websocket protocol itself forbids (larger than the server's message limit,
a text frame that is not UTF-8) fails the connection, as RFC 6455 requires (close codes
1009 and 1007): that too is one log line, not a traceback.
"""
from __future__ import annotations

import json
import logging
from typing import Any

from aiohttp import WSMessage, WSMsgType

from radixviz.errors import excerpt

log = logging.getLogger("radixviz.serve")

# each kind and the type of data it carries (None: it carries nothing we read)
KINDS = {"stdin": str, "resize": dict, "ping": str, "blur": None, "focus": None}


class Refusals:
    """The unexpected frames of one session: the first logged, the others counted."""

    def __init__(self, client: str) -> None:
        self.client, self.count = client, 0

    def refuse(self, why: str) -> None:
        self.count += 1
        if self.count == 1:
            log.warning("dropped a websocket frame from %s (%s); the session goes on, further ones are counted",
                        self.client, why)

    def failed(self, error) -> None:
        """The connection failed (aiohttp's ERROR message): a frame the protocol forbids, or
        no answer to the heartbeat (a laptop gone to sleep)."""
        log.warning("closed a session from %s: its websocket failed (%s)", self.client, excerpt(str(error), 80)[1:-1])

    def summary(self) -> None:
        if self.count > 1:
            log.warning("dropped %d websocket frames from %s in one session", self.count, self.client)


def envelope(message: WSMessage, refusals: Refusals) -> tuple[str, Any] | None:
    """``(kind, data)`` of a message the page sends, or None (refused, or a frame the
    session has nothing to do with, such as aiohttp's own close notices)."""
    if message.type == WSMsgType.ERROR:
        refusals.failed(message.data)
        return None
    if message.type != WSMsgType.TEXT:
        if message.type == WSMsgType.BINARY:
            refusals.refuse("a binary frame")
        return None
    try:
        value = json.loads(message.data)
    except RecursionError:
        refusals.refuse("JSON nested too deep")
        return None
    except ValueError:
        refusals.refuse("not JSON")
        return None
    if not (isinstance(value, list) and 1 <= len(value) <= 2 and isinstance(value[0], str)):
        refusals.refuse("not a [kind, data] message")
        return None
    kind, data = value[0], value[1] if len(value) > 1 else None
    if kind not in KINDS:
        refusals.refuse(f"unknown kind {excerpt(kind)}")
        return None
    wanted = KINDS[kind]
    if wanted is not None and not isinstance(data, wanted):
        refusals.refuse(f"{kind} with {type(data).__name__} data")
        return None
    return kind, data
