"""Several workers behind a router: N copies of the scheduler loop, each with its own pool and
cache (through the engine facade), and one router in front that picks a worker per request.

Python API (no UI)::

    from radixviz.sim.cluster import Cluster
    cluster = Cluster(workers=4, router="cache-aware", pool_size=1024, rate=4)
    cluster.submit(make_workload("multi-tenant", 200, seed=0))
    while (tick := cluster.step()) is not None:      # one pass of every worker
        tick.routes                                   # Routed: where each arrival went, and why
    result = cluster.result()                         # ClusterResult: per worker and in total

Time runs in passes: each pass, up to ``rate`` new requests arrive (in the workload's order),
together with the chat turns and session requests that came back during the last pass; the
router places each one; then every worker runs one pass of its loop (scheduler.py). A
worker's load is what the router sees: the requests it sent there that have not finished
(waiting or running), and their tokens. Every worker samples with the same seed, so a
request's answer does not depend on where it ran and the routers are compared on the same text.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections import deque
from dataclasses import dataclass, field

from radixviz.cache.engines import engine_spec

from .request import RequestSpec
from .routers import LIBRARY_DEFAULTS, Load, RouterConfig, make_router
from .scheduler import Scheduler
from .workloads import make_workload
from .warm_start import warm_worker

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from .request import RequestSpec


@dataclass(frozen=True)
class Routed:
    """One request placed by the router."""
    tick: int            # the pass it arrived in
    number: int          # the request's number in the whole run (from 0)
    worker: int
    rid: int             # its request id inside that worker
    reason: str          # the router's reason code
    text: str            # the router's reason in words
    believed: int        # tokens the router believed that worker held
    length: int          # tokens in the prompt
    follow_up: bool      # a chat turn or session request that came back


@dataclass(frozen=True)
class ClusterTick:
    """What one pass did: the arrivals placed, each worker's pass record (None: idle)."""
    tick: int
    routes: tuple
    records: tuple
    loads: tuple         # Load per worker after the pass
    trees: tuple = ()    # each worker's tree snapshot after the pass (record=True)


class WorkerScheduler(Scheduler):
    """One worker's loop; what it would queue by itself (a chat's next turn) goes back to
    the router instead, like any request arriving from outside."""

    def __init__(self, index: int, cluster: Cluster, *args: Any, **kwargs: Any):
        self.index, self.cluster = index, cluster
        super().__init__(*args, **kwargs)

    def submit(self, specs: Iterable[RequestSpec]) -> list:
        self.cluster.come_back(specs)
        return []

    def accept(self, spec: RequestSpec) -> list:
        """Queue ``spec`` here (the router chose this worker)."""
        return Scheduler.submit(self, spec)

    def load(self) -> Load:
        queued = self.waiting + self.running
        return Load(len(queued), sum(len(r.input_ids) + r.max_new_tokens for r in queued))


class Cluster:
    def __init__(self, workers: int = 4, router: str = "cache-aware", *, pool_size: int = 1024,
                 policy: str = "lpm", seed: int = 0, rate: int = 4, engine: str = "2026",
                 engine_options: dict | None = None, config: RouterConfig | None = None,
                 record: bool = False, **scheduler_options: Any):
        """``workers`` loops of ``pool_size`` slots each, ``policy`` ordering each one's queue,
        ``router`` (routers.py) in front with ``config``; ``rate`` new requests arrive per pass.
        A router that reads KV events turns them on in the workers' engines (ValueError for
        an engine without them)."""
        if isinstance(rate, bool) or not isinstance(rate, int) or rate < 1:
            raise ValueError(f"rate must be a whole number of requests per pass >= 1, not {rate!r}")
        options = dict(engine_options or {})
        spec = engine_spec(engine)
        page = options.get("page_size", 1)
        config = config or RouterConfig()          # the router as SGLang launches it
        config = RouterConfig(**{**config.__dict__, "page_size": page})
        self.router = make_router(router, workers, config, seed)
        if self.router.needs_events:
            if not spec.takes("kv_events"):   # the option the router turns on below
                raise ValueError(f"router {router} reads KV events: engine {engine} has none "
                                 f"(use an engine with kv_events, e.g. 2026)")
            options["kv_events"] = True
        self.workers = [WorkerScheduler(i, self, pool_size, policy, seed=seed, engine=engine,
                                        engine_options=options, record=False, **scheduler_options)
                        for i in range(workers)]
        self.rate, self.record = rate, record
        self.settings = {"workers": workers, "router": router, "rate": rate, "pool_size": pool_size,
                         "policy": policy, "seed": seed, "engine": engine, **options, **scheduler_options,
                         "router_config": dict(config.__dict__.items())}
        self.pending: deque = deque()     # requests from outside, not arrived yet
        self.back: list = []              # requests the workers sent back during this pass
        self.routes: list[Routed] = []
        self.ticks: list[ClusterTick] = []
        self.tick = 0
        self.peak = [0] * workers         # most requests in flight at once, per worker
        self._numbers = 0

    # ------------------------------------------------------------------ public

    def submit(self, specs: Iterable[RequestSpec]) -> None:
        """Queue requests from outside: they arrive ``rate`` a pass, in this order."""
        if isinstance(specs, RequestSpec):
            specs = [specs]
        self.pending.extend(specs)

    def come_back(self, specs: Iterable[RequestSpec]) -> None:
        """A worker's chat turn or session request: routed at the start of the next pass."""
        if isinstance(specs, RequestSpec):
            specs = [specs]
        self.back.extend(specs)

    def warm(self, held) -> list:
        """Start worker k holding the prompts of ``held[k]`` (wire/held_prompts.HeldPrompts:
        what a recorded server held); the workers past ``held`` start empty. Returns each
        warmed worker's ``Warmed``. Their inserts' KV events reach the router on the first pass."""
        if len(held) > len(self.workers):
            raise ValueError(f"{len(held)} recorded servers for {len(self.workers)} workers")
        return [warm_worker(self.workers[k], prompts.paths) for k, prompts in enumerate(held)]

    @property
    def done(self) -> bool:
        return not self.pending and not self.back and all(w.done for w in self.workers)

    def step(self) -> ClusterTick | None:
        """One pass: place the arrivals, run every worker once; None when all is done."""
        if self.done:
            return None
        arriving = [(spec, True) for spec in self.back]
        self.back = []
        for _ in range(min(self.rate, len(self.pending))):
            arriving.append((self.pending.popleft(), False))
        routes = tuple(self._place(spec, again) for spec, again in arriving)
        records = tuple(worker.step() for worker in self.workers)
        if self.router.needs_events:
            for i, worker in enumerate(self.workers):
                self.router.observe(i, worker.engine.take_events())
        self.tick += 1
        self.router.tick(self.tick)
        loads = tuple(worker.load() for worker in self.workers)
        self.peak = [max(p, load.requests) for p, load in zip(self.peak, loads)]
        trees = tuple(w.engine.snapshot() for w in self.workers) if self.record else ()
        tick = ClusterTick(self.tick, routes, records, loads, trees)
        if self.record:
            self.ticks.append(tick)
        return tick

    def run(self, max_ticks: int | None = None) -> ClusterResult:
        while max_ticks is None or self.tick < max_ticks:
            if self.step() is None:
                break
        return self.result()

    def result(self) -> ClusterResult:
        return ClusterResult(dict(self.settings), [w.stats for w in self.workers], list(self.routes),
                             self.tick, list(self.peak))

    # ------------------------------------------------------------------ helpers

    def _place(self, spec: RequestSpec, again: bool) -> Routed:
        loads = [worker.load() for worker in self.workers]
        decision = self.router.route(tuple(spec.input_ids), loads)
        worker = self.workers[decision.worker]
        queued = worker.accept(spec)
        rid = queued[0].rid if queued else -1     # -1: refused (it could never fit)
        routed = Routed(self.tick, self._numbers, decision.worker, rid, decision.reason, decision.text,
                        decision.matched, len(spec.input_ids), again)
        self._numbers += 1
        self.routes.append(routed)
        return routed


@dataclass
class ClusterResult:
    """A finished cluster run: its settings, each worker's totals, every routing decision."""
    settings: dict
    stats: list                 # SimStats per worker
    routes: list = field(default_factory=list)
    passes: int = 0
    peak_load: list = field(default_factory=list)

    def per_worker(self) -> list:
        """One dict per worker: requests and prompt tokens routed there, hit rate, tokens
        computed, the most requests in flight at once."""
        out = []
        for i, stats in enumerate(self.stats):
            mine = [r for r in self.routes if r.worker == i]
            out.append({"worker": i, "requests": len(mine), "prompt_tokens": sum(r.length for r in mine),
                        "hit_rate": round(stats.hit_rate, 4), "hit_tokens": stats.hit_tokens,
                        "tokens_computed": stats.prefill_computed + stats.decode_computed,
                        "prefill_computed": stats.prefill_computed,
                        "peak_in_flight": self.peak_load[i] if i < len(self.peak_load) else 0,
                        "evicted_tokens": stats.evicted_tokens, "finished": stats.finished})
        return out

    @property
    def hit_rate(self) -> float:
        hits = sum(s.hit_tokens for s in self.stats)
        total = hits + sum(s.prefill_computed for s in self.stats)
        return hits / total if total else 0.0

    @property
    def tokens_computed(self) -> int:
        return sum(s.prefill_computed + s.decode_computed for s in self.stats)

    def balance(self, what: str = "requests") -> float:
        """max / mean over the workers of ``what`` (requests, prompt_tokens, tokens_computed):
        1.0 is perfectly even; N means one worker took everything."""
        values = [w[what] for w in self.per_worker()]
        mean = sum(values) / len(values) if values else 0
        return max(values) / mean if mean else 1.0

    def reasons(self) -> dict:
        counts: dict = {}
        for r in self.routes:
            counts[r.reason] = counts.get(r.reason, 0) + 1
        return counts

    def to_dict(self) -> dict:
        return {"settings": self.settings, "passes": self.passes,
                "hit_rate": round(self.hit_rate, 4), "tokens_computed": self.tokens_computed,
                "balance_requests": round(self.balance("requests"), 3),
                "balance_tokens_computed": round(self.balance("tokens_computed"), 3),
                "reasons": self.reasons(), "workers": self.per_worker()}


CACHE_ONLY = "cache-only"   # cache-aware with the balance thresholds off (lessons compare it)
CACHE_LIBRARY = "cache-aware-library"   # cache-aware with CacheAwareConfig::default()


def run_router(workload: str, router: str, *, workers: int = 4, requests: int = 256,
               pool_size: int = 1024, rate: int = 2, seed: int = 0, engine: str = "2026",
               config: RouterConfig | None = None) -> ClusterResult:
    """One router on ``requests`` requests of ``workload``, as ``simulate --workers`` runs it
    (each worker inserts prompts after prefill). ``cache-only``: cache-aware without the
    balance thresholds; ``cache-aware-library``: cache-aware with the Rust library's
    ``CacheAwareConfig::default()`` instead of the launcher's defaults."""
    if router == CACHE_ONLY:
        router, config = "cache-aware", RouterConfig(balance_abs_threshold=10 ** 9)
    elif router == CACHE_LIBRARY:
        router, config = "cache-aware", LIBRARY_DEFAULTS
    cluster = Cluster(workers, router, pool_size=pool_size, rate=rate, seed=seed, engine=engine,
                      config=config, cache_unfinished=True)
    cluster.submit(make_workload(workload, requests, seed))
    return cluster.run()
