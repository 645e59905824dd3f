"""The unified tree (SGLang v0.5.23) in the scheduler loop, and ``simulate --engine unified``.

The loop is v0.5.23's (``--scheduler v0.5.23`` is this engine's default: fcfs, each match at
most the prompt's length minus one); these hooks do what v0.5.23's request layer does for a
hybrid model, in ``mem_cache/common.py`` and ``mem_cache/unified_cache/components/``:

- after every prefill a running request's prompt goes into the tree (``checkpoint_kv_cache``,
  managers/scheduler_components/batch_result_processor.py:394), which this engine's runs
  switch on; with the mamba component, only up to where the request tracked a state: the
  match's branching point when its prefill passes it, else the last checkpoint-grid point
  (``mamba_radix_cache_strategy`` auto: ``extra_buffer``, the default with overlap
  scheduling). A finished request's insert stops at its last tracked state too;
- while decoding, a request gives up the SWA KV of its own tokens that left its window
  (``maybe_evict_swa``, ``_evict_swa``: at ``seqlen - 1`` minus the window rounded up to
  pages), so its insert hands the tree tombstones for them (its SWA evicted length);
- an allocation the pools cannot serve first evicts what each lacks (the facade's pool:
  ``evict_to_free_tokens``), and a lock gives the request its own Mamba slot with a copy of
  the matched state (engine.py), which the request donates back before its insert.

Each admission's match is judged again per component (cache_verdicts.py): how far Full KV
alone, SWA's rule alone and Mamba's rule alone would have let it reach. The report gives the
hit rate each allows and the tokens each component's rule cost.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, cast

from radixviz.sim.engines import LoopHooks

from .sim_runs import UnifiedSimulation

if TYPE_CHECKING:

    from radixviz.sim.records import SimStats
    from radixviz.sim.request import Request
    from radixviz.sim.scheduler import Scheduler

    from .engine import Engine as UnifiedEngine
    from .node import UnifiedTreeNode

TOTALS = ("prompt tokens at admission", "reusable by Full KV alone", "reusable under SWA's rule",
          "reusable under Mamba's rule", "reused (every component)", "tokens the sliding window cost",
          "tokens missing Mamba states cost", "peak SWA slots used", "peak Mamba states used",
          "checkpoints after prefill", "inserts with no Mamba slot")


class UnifiedHooks(LoopHooks):
    """v0.5.23's request layer for the unified tree (the module's docstring)."""

    priority_at_insert = True
    alloc_evict = "shortfall"   # v0.5.23 evicts need minus free (mem_cache/allocator/base.py:166-168)

    if TYPE_CHECKING:
        scheduler: Scheduler

    def __init__(self, scheduler: Scheduler) -> None:
        super().__init__(scheduler)
        cache = self.engine.cache
        self.swa, self.mamba = cache.swa_enabled, cache.mamba_enabled
        self.window, self.page = cache.sliding_window_size or 0, cache.page_size
        self.judged: dict[tuple, tuple] = {}     # (rid, retracted) -> the admission's match, per component
        self.counted: set[tuple] = set()
        self.protected: dict[tuple, int] = {}    # the tree's part of the request's row (cache_protected_len)
        self.swa_freed: dict[tuple, int] = {}    # where its own SWA KV starts (its SWA evicted length)
        self.tracked: dict[tuple, int] = {}      # where its last tracked Mamba state is
        self.totals: Counter = Counter()

    @property
    def engine(self) -> UnifiedEngine:
        return cast("UnifiedEngine", self.scheduler.engine)

    @staticmethod
    def _key(req: Request) -> tuple:
        return req.rid, req.times_retracted

    # ------------------------------------------------------------------ match

    def match(self, queue: list) -> bool:
        from radixviz.sim.steps import match_key  # the loop's steps import torch: the command line loads this first

        s, engine = self.scheduler, self.engine
        for req in queue:
            prefix, last_node = engine.match(match_key(s, req))
            n_prefix = prefix.shape[0]
            req.prefix_indices, req.last_node, req.prefix_len = prefix, last_node, n_prefix
            req.extend_input_len = len(req.input_ids) - n_prefix
            result = engine.last_match
            assert result is not None
            verdicts = engine.walk_verdicts(result)
            self.judged[self._key(req)] = (len(req.input_ids), result.full_kv_hit_length,
                                           engine.reach(verdicts, "swa"), engine.reach(verdicts, "mamba"),
                                           result.mamba_branching_seqlen)
        return True

    def _count(self, req: Request) -> None:
        key = self._key(req)
        if key in self.counted or key not in self.judged:
            return
        self.counted.add(key)
        prompt, full, swa, mamba, _ = self.judged[key]
        self.protected[key] = req.prefix_len
        for name, n in zip(TOTALS, (prompt, full, swa, mamba, req.prefix_len)):
            self.totals[name] += n

    # ------------------------------------------------------------- each round

    def start_round(self) -> None:
        s = self.scheduler
        for req in s.running:
            self._count(req)
            if self.swa:
                self._release_window(req)
        alloc = self.engine.cache.token_to_kv_pool_allocator
        if self.swa:
            used = alloc.swa_attn_allocator.num_pages * self.page - alloc.swa_available_size()  # type: ignore[union-attr]
            self.totals["peak SWA slots used"] = max(self.totals["peak SWA slots used"], used)
        pool = self.engine.cache.mamba_pool
        if pool is not None:
            self.totals["peak Mamba states used"] = max(self.totals["peak Mamba states used"],
                                                        pool.size - pool.available_size())

    def _release_window(self, req: Request) -> None:
        """v0.5.23's ``_evict_swa`` for a decoding request: the SWA KV of its own tokens more
        than a window (in whole pages) behind the newest goes back to the SWA pool."""
        if len(req.output_ids) < 2 or req.kv_row is None:   # its first decode step: not yet
            return
        key = self._key(req)
        pre_len = req.kv_len - 1
        evicted = self.swa_freed.get(key, 0)
        if pre_len - self.window < evicted + 1:
            return
        start = max(evicted, self.protected.get(key, req.prefix_len))
        keep = -(-max(self.window, self.page) // self.page) * self.page
        new = max(evicted, pre_len - keep) // self.page * self.page
        if new > start:
            self.engine.cache.token_to_kv_pool_allocator.free_swa_segment(req.kv_row[start:new])  # type: ignore[union-attr]
        if new > evicted:
            self.swa_freed[key] = new

    # -------------------------------------------------------------- inserts

    def _cache_len(self, req: Request, end: int, prefill: bool) -> int:
        """Where the request's last tracked Mamba state is, at most ``end`` (whole pages)."""
        if not self.mamba:
            return self.engine.whole_pages(end)
        key = self._key(req)
        base = self.protected.get(key, req.prefix_len)
        if prefill:   # the prefill may track the match's branching point instead
            at = self.engine.tracked_state_end(base, end, self.judged.get(key, (0, 0, 0, 0, None))[4])
        else:
            at = max(self.engine.tracked_state_end(base, end), self.tracked.get(key, 0))
        self.tracked[key] = at
        return at

    def _has_state_room(self) -> bool:
        cache = self.engine.cache
        pool = cache.mamba_pool
        return pool is None or pool.available_size() + cache.mamba_evictable_size() > 0

    def cache_unfinished(self, req: Request) -> bool:
        """v0.5.23's checkpoint after a prefill: the prompt up to where a state was tracked
        goes into the tree, the row points at the tree's copy, the lock moves down."""
        self._count(req)
        key, engine = self._key(req), self.engine
        own = self.protected.get(key, req.prefix_len)
        end = self._cache_len(req, len(req.input_ids), prefill=True)
        if end <= own:
            return True
        if not self._has_state_room():
            self.totals["inserts with no Mamba slot"] += 1
            return True
        s = self.scheduler
        engine.insert(req.input_ids[:end], req.kv_row[:end].clone(), req.priority)
        node = engine.inserted_node()
        tree_slots = engine.path_slots(req.input_ids[:end])
        s.pool.add_refs(tree_slots)
        req.kv_row[own:end] = tree_slots[own:end]
        engine.lock(node)
        engine.unlock(cast("UnifiedTreeNode", req.last_node))
        req.last_node = node
        self.protected[key] = end
        self.totals["checkpoints after prefill"] += 1
        return True

    def insert_finished(self, req: Request, tokens: tuple, slots: Any) -> None:
        """A finished request's insert: up to its last tracked state, its Mamba slot donated."""
        self._count(req)
        engine, key = self.engine, self._key(req)
        end = self._cache_len(req, len(tokens), prefill=False)
        # the request's own Mamba slot goes back before its state is donated
        engine.give_back_state(cast("UnifiedTreeNode", req.last_node))
        if end > 0 and self._has_state_room():
            engine.insert(tokens[:end], slots[:end], req.priority)
            rest = slots[end:]
        else:
            self.totals["inserts with no Mamba slot"] += int(end > 0)
            rest = slots
        if len(rest):
            self.scheduler.pool.free(rest)
        for known in (self.judged, self.protected, self.swa_freed, self.tracked):
            known.pop(key, None)   # the request is done: a long trace keeps nothing of it
        self.counted.discard(key)

    def finish(self, stats: SimStats) -> None:
        for req in self.scheduler.running:
            self._count(req)
        t = self.totals
        t["tokens the sliding window cost"] = t["reusable by Full KV alone"] - t["reusable under SWA's rule"]
        t["tokens missing Mamba states cost"] = t["reusable by Full KV alone"] - t["reusable under Mamba's rule"]
        shown = [n for n in TOTALS if (self.swa or ("SWA" not in n and "sliding" not in n))
                 and (self.mamba or "Mamba" not in n)]
        prompt = t["prompt tokens at admission"] or 1
        stats.engine_totals.update({name: t[name] for name in shown})
        for name, part in (("hit rate, Full KV alone", "reusable by Full KV alone"),
                           ("hit rate under SWA's rule", "reusable under SWA's rule"),
                           ("hit rate under Mamba's rule", "reusable under Mamba's rule")):
            if part in shown:
                stats.engine_totals[name] = f"{t[part] / prompt:.1%}"


HOOKS = UnifiedHooks
SIMULATION = UnifiedSimulation


def replay_class() -> type:
    """The why-miss replay of this engine (sim_why_miss.py, loaded when asked: torch)."""
    from .sim_why_miss import HybridReplay  # defers torch: the command line loads this module first
    return HybridReplay
