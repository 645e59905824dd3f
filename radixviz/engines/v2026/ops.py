"""Today's cache's script operations (engine 2026, and the host tier built on it): pages,
the eviction policy and KV events, and what an insert reports of them.

As in session.py, each handler's ``def`` carries its ``op.NAME`` marker and a step outside
the engine its own label.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from radixviz.script.narrate import node_name
from radixviz.script.parser import Op
from radixviz.script.ops import EngineOps

if TYPE_CHECKING:
    from radixviz.script.frames import Frame

# why today's cache's own steps happen (its nodes keep a lock count, hits and a priority,
# and it evicts by a policy's key); narrate.py's words serve the rest
WHY_TODAY = {
    "heap": "Only unlocked leaves can go. Today's cache orders them by the eviction policy's key, "
            "smallest first; the key of each is shown.",
    "pop": "The leaf with the smallest key goes. Locked nodes were never candidates, so nothing is skipped.",
    "ref": "lock_ref counts the requests using a node. Going 0 → 1 moves its tokens from evictable to "
           "protected; 1 → 0 moves them back.",
    "page_cut": "Only whole pages are cached, so a match first drops the partial page at the end of the key.",
    "hit": "Each insert that passes through a node counts a hit. LFU evicts the fewest hits first; SLRU "
           "protects nodes hit twice or more. Matches and locks never count.",
    "priority": "A node keeps the highest priority of the inserts through it; the priority policy evicts "
                "low priorities first.",
    "kv_event": "With KV events on, the cache reports each page it stores (named by a SHA-256 chained "
                "from the page before), each page it frees, and a reset. A router or a storage tier "
                "reads these to know what this worker holds. A split reports nothing: its pages stay stored.",
}


def describe(frame: Frame) -> str | None:
    """The line of a step only today's nodes take (a lock count), or None: narrate.py's."""
    if frame.kind == "ref" and frame.event is not None:
        d = frame.data
        return f"lock_ref of {node_name(frame, frame.nodes[0] if frame.nodes else None)}: {d['old']} → {d['new']}"
    return None


def explain(frame: Frame) -> str | None:
    """Why one of today's cache's own steps happens, or None: narrate.py's words serve."""
    return WHY_TODAY.get(frame.kind) if frame.event is not None else None


class TodaysOps(EngineOps):
    takes_priority = True
    takes_namespace = True

    def insert_result(self, result: dict, done: Any, op: Op) -> None:
        result["freed_tail"] = done.tail.tolist()
        result["priority"] = op.priority or 0

    def _do_page_size(self, op: Op) -> dict:  # step: op.page-size
        session = self.session
        session.set_option("page_size", op.count)  # step: page_size
        session._step("page_size", "page_size", __name__, page_size=op.count)
        return {"page_size": op.count}

    def _do_eviction(self, op: Op) -> dict:  # step: op.eviction
        session = self.session
        session.set_option("eviction_policy", op.mode)  # step: eviction
        session._step("eviction", "eviction", __name__, policy=op.mode)
        return {"eviction_policy": op.mode}

    def _do_events(self, op: Op) -> dict:  # step: op.events
        session = self.session
        session.set_option("kv_events", op.mode == "on")  # step: events
        session._step("events", "events", __name__, kv_events=op.mode)
        return {"kv_events": op.mode}


OPS = TodaysOps
