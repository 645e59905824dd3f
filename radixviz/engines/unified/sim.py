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

from radixviz.cache.options import EVICTION, PAGE, SHAPE
from radixviz.errors import UsageError
from radixviz.limits import PAGE_SIZE

from radixviz.sim.engines import LoopHooks
from radixviz.sim.engines.simulate import PolicyRuns, Progress, Report, Simulation, later_options, run_sweep
from radixviz.sim.schedule_v0523 import loop_words
from radixviz.sim.workloads import make_workload, request_count

if TYPE_CHECKING:
    from collections.abc import Sequence

    from radixviz.sim.records import SimStats
    from radixviz.sim.request import Request, RequestSpec
    from radixviz.sim.scheduler import Scheduler

    from .engine import Engine as UnifiedEngine
    from .node import UnifiedTreeNode

# the model layouts ``--shape`` names, as the unified tree's options. The window and the state
# spacing are scaled to this tool's workloads (prompts of a few hundred tokens): Gemma 3's
# window is 1,024 tokens and FLA's chunk 64, over prompts of thousands
SHAPES: dict[str, dict[str, Any]] = {
    "full": {"components": ("full",)},
    "swa_5to1": {"components": ("full", "swa"), "window": 32},
    "linear": {"components": ("full", "mamba"), "mamba_chunk": 16},
    "hybrid": {"components": ("full", "swa", "mamba"), "window": 32, "mamba_chunk": 16},
}
SWA_FULL_TOKENS_RATIO = 0.8   # SGLang's --swa-full-tokens-ratio default: the SWA pool's share of the Full pool's
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
        self.chunk, self.grid = cache.mamba_cache_chunk_size or 1, cache.mamba_checkpoint_grid or 1
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
        at = base + (end - base) // self.grid * self.grid
        branch = self.judged.get(key, (0, 0, 0, 0, None))[4]
        if prefill and branch is not None and base < branch < end and (branch - base) % self.chunk == 0:
            at = branch   # the prefill tracks the match's branching point instead
        at = max(at, self.tracked.get(key, 0)) if not prefill else at
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
        for known in (self.protected, self.swa_freed, self.tracked):
            known.pop(key, None)

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


def resolve_options(own: dict, shape: str | None, pool_size: int) -> dict:
    """The engine's options for a run: those given, then the shape's for the rest; with SWA
    and no SWA pool given, SGLang's default share of the Full pool (0.8)."""
    options = {k: v for k, v in own.items() if k != SHAPE.name}
    for name, value in SHAPES.get(shape or "", {}).items():
        options.setdefault(name, value)
    if "swa" in options.get("components", ()) and options.get("swa_pool") is None:
        page = options.get("page_size", PAGE.default)
        options["swa_pool"] = max(page, int(pool_size * SWA_FULL_TOKENS_RATIO) // page * page)
    return options


class UnifiedSimulation(Simulation):
    """``simulate --engine unified``: one run per scheduling policy on the shape asked for, and
    the same requests on Full KV alone beside it; per component, the hit rate its rule allows
    and the tokens it cost (``stats.engine_totals``)."""

    def check_sweep(self, key: str) -> None:
        if key in ("host", "page"):
            raise UsageError(f"--engine unified sweeps pool= or requests=, not {key}=")

    def cluster_cache(self) -> tuple[int, str | None]:
        raise UsageError("--workers runs workers with today's cache (--engine 2026): the unified tree "
                         "runs one worker")

    def prepare(self, options: dict) -> None:
        args = self.args
        try:
            page = PAGE_SIZE.parse(args.page_size)
        except ValueError as exc:
            raise UsageError(f"--page-size {exc}") from None
        if "," in args.eviction_policy:
            raise UsageError("--engine unified runs one eviction policy at a time")
        own = {**self.own, "page_size": page, "eviction_policy": args.eviction_policy.strip().lower()}
        self.engine_options = resolve_options(own, self.own.get(SHAPE.name), options["pool_size"])
        try:   # refused here, before any run, as the settings object refuses it
            self.spec.make_settings(options["pool_size"], **self.engine_options)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.policies, self.sweep = options.pop("policies"), options.pop("sweep", None)

    def app_cache(self) -> dict | None:
        return {"engine": self.spec.name, "engine_options": dict(self.engine_options)}

    def loop_options(self) -> dict:
        # v0.5.23 puts every prefilled prompt into the tree (checkpoint_kv_cache)
        return {"model": self.args.model, "engine": self.spec.name, **later_options(self.args),
                "cache_unfinished": True, "engine_options": self.engine_options}

    def header(self) -> dict:
        o = self.engine_options
        words = ", ".join(self.spec.words(o))
        return {"engine": self.spec.name, "scheduler_loop": self.args.scheduler, "shape": self.own.get(SHAPE.name),
                **{k: list(v) if isinstance(v, tuple) else v for k, v in o.items()},
                "note": f"scheduler loop: {loop_words(self.args.scheduler or '')}, its prompts cached after "
                        f"prefill; cache: SGLang v0.5.23's unified tree, {words}"}

    def run(self, specs: Sequence[RequestSpec] | None, name: str, options: dict, progress: Progress) -> Report:
        from radixviz.sim.runner import replay  # imports torch

        common = self.loop_options()
        if self.sweep is not None:
            return run_sweep(self.spec.name, name, self.sweep, self.policies, specs, options, common, self.header())
        requests, pool_size, seed = (options.pop(k) for k in ("requests", "pool_size", "seed"))
        if specs is None:
            specs = make_workload(self.args.workload, requests, seed)
        full_only = self.engine_options.get("components", ("full",)) == ("full",)
        results = {}
        for policy in self.policies:
            runs = [(policy, common)]
            if not full_only:   # the same requests on Full KV alone, beside it
                base = {k: v for k, v in self.engine_options.items() if k in (PAGE.name, EVICTION.name)}
                runs.append((f"{policy}, full only", {**common, "engine_options": base}))
            for label, loop in runs:
                shown = progress(label, request_count(specs))
                results[label] = replay(specs, policy, pool_size, seed, workload=name, progress=shown,
                                        **loop, **options)
                if shown is not None:
                    shown.done()
        table = "compare" if len(results) > 1 else "single"
        return PolicyRuns(self.spec.name, name, results, table, self.header())


SIMULATION = UnifiedSimulation


def replay_class() -> type:
    """The why-miss replay of this engine (sim_why_miss.py, loaded when asked: torch)."""
    from .sim_why_miss import HybridReplay  # defers torch: the command line loads this module first
    return HybridReplay
