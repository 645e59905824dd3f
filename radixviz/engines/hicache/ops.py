"""The host tier's operations in a session (engine hicache): copies, their acknowledgement,
loads back, the host pool's size and the write policy.

``HostTierOps`` is the engine's ``EngineOps`` (ops/__init__.py), named by its registry line;
it builds on today's cache's (v2026/ops.py). As in session.py, each handler's ``def``
carries its ``op.NAME`` marker and a step outside the engine its own label. Before each
operation, with ``auto-sync on`` (the default), the session acknowledges the copies still in
flight, as SGLang's scheduler checks them at the start of every round; ``auto-sync off``
leaves them in flight until a ``sync``, so a write can still be running when an eviction
comes.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from radixviz.cache import tokens_text
from radixviz.cache.options import PAGE

from .narrate import describe_host, explain_host
from radixviz.script.parser import Op
from radixviz.engines.v2026 import ops as v2026
from radixviz.engines.v2026.ops import TodaysOps

from .engine import Engine as HostTierEngine

if TYPE_CHECKING:
    from radixviz.script.frames import Frame

# operations that change settings or acknowledge by themselves: no sync first
NO_AUTO_SYNC = ("sync", "auto-sync", "engine", "reset", "host-size", "page-size", "hicache-fixes")
# hicache-fixes MODE -> the 9fbe6800a bugs it brings back (engines/hicache/cache_head_bugs.py FIX_MODES)
FIX_MODES = {"on": (), "off": ("load_back_unprotected", "host_leaf_by_evicted"),
             "load-back-unprotected": ("load_back_unprotected",),
             "host-leaf-by-evicted": ("host_leaf_by_evicted",)}


def describe(frame: Frame) -> str | None:
    """The host tier's line for a step, else today's cache's (this engine builds on it)."""
    line = describe_host(frame)
    return v2026.describe(frame) if line is None else line


def explain(frame: Frame) -> str | None:
    why = explain_host(frame)
    return v2026.explain(frame) if why is None else why


class HostTierOps(TodaysOps):
    """Session handlers for the host tier (the session's engine has one)."""

    ways_to_room = "evict, unlock, sync or reset"

    @property
    def engine(self) -> HostTierEngine:
        """The session's engine, this one (a session calls an engine's hooks on it only)."""
        engine = self.session.engine
        assert isinstance(engine, HostTierEngine)
        return engine
    fills_before_insert = True   # a write_through insert copies its slots to the host as it runs
    auto_sync = True

    def precheck(self, op: Op, refuse: Callable[[str], Any]) -> None:
        """Refuse, changing nothing, what the host tier cannot do now."""
        s = self.session
        if op.name == "host-size":
            page = self.engine.settings.of(PAGE)
            if (op.count or 0) <= s.pool_size:   # the parser gives host-size its count
                refuse(f"host size {op.count}: the host pool must be larger than the device pool "
                       f"({s.pool_size} slots), as SGLang requires")
            if (op.count or 0) % page:
                refuse(f"host size {op.count} is not whole pages of {page}")
        elif op.name == "write-policy" and self.engine.in_flight() and not self.auto_sync:
            refuse("copies are in flight: sync before changing the write policy")

    def sync_first(self, op: Op) -> int:
        """With auto-sync on, acknowledge what is in flight before ``op`` runs; return how
        many nodes were acknowledged."""
        if self.auto_sync and op.name not in NO_AUTO_SYNC and self.engine.in_flight():
            return self.engine.sync()
        return 0

    def match(self, op: Op) -> tuple[Any, Any, dict]:
        found = self.engine.match_tiers(op.key or (), op.ns)
        return found.device_indices, found.last_device_node, {
            "host_hit_length": found.host_hit_length, "last_host_node": found.last_host_node.id}

    def tier_measures(self, tree: Any, nodes: list) -> dict[str, int]:
        return {"host_only": sum(1 for n in nodes if n.evicted), "host_used": tree.host_used,
                "in_flight": tree.writes_in_flight + tree.loads_in_flight,
                "unreachable": len(tree.unreachable)}

    def _do_sync(self, op: Op) -> dict:  # step: op.sync
        return {"acknowledged": self.engine.sync()}

    def _do_auto_sync(self, op: Op) -> dict:  # step: op.auto-sync
        self.auto_sync = op.mode == "on"  # step: auto_sync
        self.session._step("auto_sync", "auto_sync", __name__, mode=op.mode, in_flight=self.engine.in_flight())
        return {"auto_sync": op.mode}

    def _do_write_policy(self, op: Op) -> dict:  # step: op.write-policy
        self.session.set_option("write_policy", op.mode)  # step: write_policy
        self.session._step("write_policy", "write_policy", __name__, policy=op.mode)
        return {"write_policy": op.mode}

    def _do_hicache_fixes(self, op: Op) -> dict:  # step: op.hicache-fixes
        bugs = FIX_MODES[str(op.mode)]
        # SGLang's lines break the tree's invariants on purpose, until the next reset
        self.session.knowingly_broken |= bool(bugs)
        self.session.set_option("head_bugs", bugs)  # step: head_bugs
        self.session._step("head_bugs", "head_bugs", __name__, mode=op.mode, bugs=bugs)
        return {"mode": op.mode, "head_bugs": list(bugs)}

    def _do_host_size(self, op: Op) -> dict:  # step: op.host-size
        self.session.set_option("host_size", op.count)  # step: host_size
        self.session._step("host_size", "host_size", __name__, host_size=op.count)
        return {"host_size": op.count}

    def _do_evict_host(self, op: Op) -> dict:  # step: op.evict-host
        return {"evicted": self.engine.evict_host(op.count or 0)}

    def _do_load_back(self, op: Op) -> dict:  # step: op.load-back
        found = self.engine.match_tiers(op.key or (), op.ns)
        result: dict[str, Any] = {"matched": len(found.device_indices), "host_hit_length": found.host_hit_length,
                  "loaded": 0, "slots": [], "node": found.last_device_node.id}
        if found.host_hit_length:
            slots, node = self.engine.load_back(found.last_host_node)
            self.engine.start_loads()
            result.update(loaded=len(slots), slots=slots.tolist(), node=node.id)
        key = op.key or ()   # the parser gives load-back its key
        result["loaded_text"] = tokens_text(key[result["matched"]:result["matched"] + result["loaded"]])
        return result


OPS = HostTierOps
