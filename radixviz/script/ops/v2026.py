"""Today's cache's script operations (engine 2026, and the host tier built on it): pages,
the eviction policy and KV events, and what an insert reports of them.

As in session.py, each handler's ``def`` carries its ``op.NAME`` marker and a step outside
the engine its own label.
"""
from __future__ import annotations

from typing import Any

from ..parser import Op
from . import EngineOps


class TodaysOps(EngineOps):
    takes_priority = True
    takes_namespace = True

    def insert_result(self, result: dict, done: Any, op: Op) -> None:
        result["freed_tail"] = done.tail.tolist()
        result["priority"] = op.priority or 0

    def _do_page_size(self, op: Op) -> dict:  # step: op.page-size
        session = self.session
        session.options["page_size"] = op.count
        session._fresh_engine(session.engine.spec)  # step: page_size
        session._step("page_size", "page_size", __name__, page_size=op.count)
        return {"page_size": op.count}

    def _do_eviction(self, op: Op) -> dict:  # step: op.eviction
        session = self.session
        session.options["eviction_policy"] = op.mode
        session.engine.change("eviction_policy", op.mode)  # step: eviction
        session._step("eviction", "eviction", __name__, policy=op.mode)
        return {"eviction_policy": op.mode}

    def _do_events(self, op: Op) -> dict:  # step: op.events
        session = self.session
        session.options["kv_events"] = op.mode == "on"
        session._fresh_engine(session.engine.spec)  # step: events
        session._step("events", "events", __name__, kv_events=op.mode)
        return {"kv_events": op.mode}


OPS = TodaysOps
