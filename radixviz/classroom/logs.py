"""The classroom's log: one line a record, written by a thread of its own.

textual-serve logs through Rich with tracebacks and their locals: a request that failed
cost the event loop a 170-line drawing, and 600 of them (one address's burst) kept every
other student waiting seconds for a page (issue 53). Here the event loop only puts a
record on a queue, reduced to one line first (an error's type and message, never its
traceback unless ``--debug``); a listener thread formats and writes it.
"""
from __future__ import annotations

import logging
import logging.handlers
import queue
import sys
import time

from radixviz.errors import excerpt

FORMAT = "%(levelname)-8s %(message)s"
MAX_LINE = 400            # characters of one record's message
THINNED = ("aiohttp.server", "aiohttp.web", "aiohttp.websocket")   # a client's malformed request
THIN_SECONDS = 60.0


class Thinned(logging.Filter):
    """aiohttp's own line for each malformed request (a raw byte in a URL, a bad header)
    passes once a minute, with how many were held back: a client sending them as fast as it
    can must not fill the teacher's terminal."""

    def __init__(self) -> None:
        super().__init__()
        self.passed_at = -THIN_SECONDS
        self.held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(THINNED):
            return True
        now = time.monotonic()
        if now - self.passed_at < THIN_SECONDS:
            self.held += 1
            return False
        if self.held:
            record.msg, record.args = f"{record.getMessage()} (and {self.held} more in the last minute)", None
        self.passed_at, self.held = now, 0
        return True


class OneLineQueue(logging.handlers.QueueHandler):
    """A record on the queue as one line: the message, with an exception's type and text
    instead of its traceback (kept, whole, with ``keep_traceback``)."""

    def __init__(self, sink: queue.SimpleQueue, keep_traceback: bool) -> None:
        super().__init__(sink)
        self.keep_traceback = keep_traceback

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None and not self.keep_traceback:
            error = record.exc_info[1]
            message += f": {type(error).__name__}: {excerpt(str(error), 120)[1:-1]}"
        if not self.keep_traceback:
            message = " ".join(message.split())[:MAX_LINE]
            record = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None, "stack_info": None})
        else:
            record = logging.makeLogRecord(record.__dict__)
        record.msg, record.args = message, None
        return record


def start_logging(debug: bool) -> logging.handlers.QueueListener:
    """Route every log record through the queue to stdout; the listener, started (stop it
    to flush the last lines)."""
    sink: queue.SimpleQueue = queue.SimpleQueue()
    writer = logging.StreamHandler(sys.stdout)
    writer.setFormatter(logging.Formatter(FORMAT))
    listener = logging.handlers.QueueListener(sink, writer)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = OneLineQueue(sink, keep_traceback=debug)
    handler.addFilter(Thinned())
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    listener.start()
    return listener
