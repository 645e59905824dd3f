"""The unified tree's script operations (engine unified): what a match reports of each
component, how an insert was handed over, the refusals that keep a full pool from failing
half way, and the page size and eviction policy as operations.

An ``insert`` here is a request's end, SGLang's ``cache_finished_req`` (engine.py): the slots
the session allocated are the request's own (its ``prev_prefix_len`` is 0: it matched
nothing it reads in place), all inside its window (SWA evicted length 0), and it brings a
fresh Mamba state. A ``lock`` is a request holding its match: with the mamba component it
gets its own slot holding a copy of the matched state until ``unlock``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from radixviz.cache.engines import option_ops
from radixviz.script.ops import EngineOps
from radixviz.script.parser import Op

from .engine import Engine as UnifiedEngine
from .narrate import describe, explain
from .preview import verdicts

if TYPE_CHECKING:
    import torch

    from radixviz.cache.contract import CacheNode

__all__ = ["OPS", "UnifiedOps", "describe", "explain"]


class UnifiedOps(EngineOps):
    """Session hooks of the unified engine."""

    ways_to_room = "evict, evict N swa, evict N mamba, unlock or reset"
    takes_priority = True

    @property
    def engine(self) -> UnifiedEngine:
        """The session's engine, this one (a session calls an engine's hooks on it only)."""
        return cast(UnifiedEngine, self.session.engine)

    def precheck(self, op: Op, refuse: Callable[[str], object]) -> None:
        """Refuse, before anything changes, an insert the SWA or Mamba pool cannot take even
        after evicting, and a lock whose holder would find no Mamba slot for its copy."""
        self._precheck_option(op, refuse)
        cache = self.engine.cache
        if op.name == "insert" and cache.swa_enabled:
            page = cache.page_size
            need = -(-len(op.key or ()) // page) * page
            alloc = cache.token_to_kv_pool_allocator
            room = alloc.swa_available_size() + cache.swa_evictable_size()  # type: ignore[union-attr]
            if need > room:
                refuse(f"SWA pool full: {need} slots needed, {alloc.swa_available_size()} free and "  # type: ignore[union-attr]
                       f"{cache.swa_evictable_size()} evictable ({self.ways_to_room})")
        pool = cache.mamba_pool
        short = pool is not None and pool.available_size() + cache.mamba_evictable_size() < 1
        if op.name in ("insert", "lock") and short:
            refuse(f"Mamba pool full: no state slot free or evictable for the request ({self.ways_to_room})")

    def _precheck_option(self, op: Op, refuse: Callable[[str], object]) -> None:
        """An option's operation (``components full,swa``, ``window 4``) whose value does not
        fit the others: the refusal the settings object would raise, before anything changes."""
        option = option_ops().get(op.name)
        if option is None or option.name not in self.engine.settings:
            return
        value = op.count if option.limit is not None else (op.mode == "on" if option.is_switch else op.mode)
        try:
            self.engine.settings.replace(**{option.name: value})
        except ValueError as error:
            refuse(str(error))

    def match(self, op: Op) -> tuple[torch.Tensor, CacheNode, dict]:
        value, last_node, extra = super().match(op)
        result = self.engine.last_match
        assert result is not None
        extra["full_hit"] = result.full_kv_hit_length
        judged = verdicts(self.engine.cache.snapshot(), op.key or ())
        extra["refused"] = [{"node": v.node, "at": v.end, "by": dict(v.refused)} for v in judged if v.refused]
        extra["stopped_by"] = sorted({c for v in judged if v.end > len(value) for c, _ in v.refused})
        # None where there is none: a lesson predicts that too (lesson 19, a spacing of 64)
        extra["swa_branch"] = result.swa_branching_seqlen
        extra["mamba_branch"] = result.mamba_branching_seqlen
        return value, last_node, extra

    def insert_result(self, result: dict, done: Any, op: Op) -> None:
        result["freed_tail"] = done.tail.tolist()
        result["priority"] = op.priority or 0
        how = self.engine.last_insert
        if how is not None:
            result.update(prev_prefix_len=how.prev_prefix_len, swa_evicted=how.swa_evicted)
            if how.mamba_slot is not None:
                result.update(mamba_slot=how.mamba_slot, mamba_exist=how.mamba_exist)

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


OPS = UnifiedOps
