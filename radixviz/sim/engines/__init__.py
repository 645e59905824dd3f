"""What the 2024 scheduler loop does differently for one engine, and how ``simulate`` runs it:
each engine's hooks in a module of its own, named by its registry line (``EngineSpec.sim``)
and loaded when a Scheduler first opens that engine.

``LoopHooks`` is the shared behaviour (the first release's cache needs nothing more); an
engine's module subclasses it as ``HOOKS``: today's cache takes a priority at insert
(engines/v2026/sim.py), the host tier acknowledges copies each round, matches on both tiers and
loads back at admission (engines/hicache/sim.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from radixviz.cache.engines import EngineSpec

if TYPE_CHECKING:
    from radixviz.cache.facade import CacheEngine

    from ..records import SimStats


class LoopHost(Protocol):
    """What the hooks reach of the Scheduler that runs them. scheduler.py imports this
    module, so the hooks are typed by its shape rather than by its class: the two modules do
    not import each other, and mypy checks the Scheduler fits where it hands itself over."""
    engine: CacheEngine   # the facade's Engine the loop drives


class LoopHooks:
    """The hooks a Scheduler calls; this base changes nothing of the 2024 loop."""

    # today's cache takes a priority at insert (SGLang's cache_finished_req passes the
    # request's); the first release's insert has no such argument
    priority_at_insert = False
    # the cache the 2024 loop was written for (engine 2024): a view of the loop need not name
    # it; any other is "another engine's cache in the 2024 loop" and its status line says so
    loop_own_cache = False
    # whether the first release's insert (bug #4: one slot fewer than the key) can run on it
    runs_release_insert = False
    # how much a failed allocation evicts (the Scheduler's ``alloc_evict`` default): ``need``,
    # the whole allocation, as the 2024 release (router/infer_batch.py:140 and :215 at
    # 22085081b) and SGLang up to March 2026 (mem_cache/common.py:251-252 at 9fbe6800a) did;
    # an engine of SGLang v0.5.23 says ``shortfall``, need minus free
    # (mem_cache/allocator/base.py:166-168). docs/simulation-api.md has the table.
    alloc_evict = "need"
    # whether the loop may key this engine by block units (sim/unit_engine.py): an engine that
    # counts its sizes by its values' length and frees no slot in its own insert
    block_units = False

    def __init__(self, scheduler: LoopHost):
        self.scheduler = scheduler

    def start_round(self) -> None:
        """At the start of every forward pass."""

    def match(self, queue: list) -> bool:
        """Match ``queue`` the engine's own way; False: the loop's shared match serves."""
        return False

    def before_batch(self) -> None:
        """After admission, before the batch's slots are allocated."""

    def admission(self) -> dict[str, Any]:
        """Keyword arguments for ``admission.admit`` (a load back and a re-match)."""
        return {}

    def insert_finished(self, req: Any, tokens: tuple, slots: Any) -> None:
        """Put a finished request's ``tokens`` into the tree with their ``slots`` (one pool
        reference each, handed over): the facade's insert, with the request's priority where
        the engine takes one. An engine whose insert takes more of the request (the unified
        tree's Mamba state and checkpoint) overrides it."""
        self.scheduler.engine.insert(tokens, slots, req.priority)

    def cache_unfinished(self, req: Any) -> bool:
        """Insert a running request's prompt after its prefill the engine's own way; False:
        the loop's (steps.cache_unfinished)."""
        return False

    def finish(self, stats: SimStats) -> None:
        """Add this engine's totals to ``stats`` when the run's result is taken."""


def hooks_class(spec: EngineSpec) -> type[LoopHooks]:
    """The engine's own ``LoopHooks`` class (``HOOKS`` of its sim module), or the shared one."""
    part = spec.part("sim")
    return getattr(part, "HOOKS", None) or LoopHooks


def loop_hooks(spec: EngineSpec, scheduler: LoopHost) -> LoopHooks:
    """The engine's own ``LoopHooks`` on ``scheduler``."""
    return hooks_class(spec)(scheduler)
