"""The host tier in the 2024 scheduler loop: what SGLang's scheduler does for HiRadixCache.

Three places change, as in SGLang's scheduler of March 2026 (``schedule_policy.py``,
``scheduler.py``): every round starts by acknowledging the copies that finished
(``check_hicache_events``); matching reports, beside the device prefix, how many more prompt
tokens the host holds and the deepest node with a host copy; and admitting a request whose
prompt hits on the host loads that part back (``init_load_back``) while the request's lock
is held, moving the lock down to the loaded node. The loop's own rules stay the 2024 ones.

Here too: what the host tier adds to a run (``simulate --engine hicache``, ``--sweep host=``),
the same requests on the GPU-only cache and on the hierarchical cache with host pools of
several sizes. The baseline is today's cache (engine ``2026``) with the same page size and
eviction policy, so the only difference is the host tier. Each point keeps the run's totals:
hit rate, prompt tokens reused (split into those found on the device and those loaded back
from the host), prompt tokens computed, and the tokens the engine moved each way.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from radixviz.cache.engines import flag_owners
from radixviz.cache.options import EVICTION, PAGE, WRITE_POLICY
from radixviz.errors import UsageError

from radixviz.sim import defaults as D
from radixviz.sim.schedule_v0523 import RELEASE_LOOP
from radixviz.sim.workloads import make_workload, request_count
from radixviz.sim.engines.simulate import Progress, Report, later_options
from radixviz.engines.v2026.sim import TodaysHooks, TodaysSimulation, parse_cache_options

if TYPE_CHECKING:
    from collections.abc import Sequence

    from radixviz.sim.records import SimStats
    from radixviz.sim.request import RequestSpec
    from radixviz.sim.scheduler import Scheduler


def match_tiers(s: Scheduler, queue) -> None:
    """``steps.match_requests`` for an engine with a host tier: the device prefix as usual,
    plus the host hit of each request."""
    from radixviz.sim.steps import match_key  # the loop's steps import torch: the command line loads this module first

    match = s.engine.match_tiers
    for req in queue:
        found = match(match_key(s, req))
        prefix = found.device_indices
        n_prefix = prefix.shape[0]
        req.prefix_indices, req.last_node, req.prefix_len = prefix, found.last_device_node, n_prefix
        req.extend_input_len = len(req.input_ids) - n_prefix
        req.host_hit_length, req.last_host_node, req.host_loaded = found.host_hit_length, found.last_host_node, 0


def rematch(s: Scheduler, req) -> None:
    """Match ``req`` again. radixviz's loop does it for the requests after a load back in the
    same round: the load's eviction may have taken the prefix this round's match found
    (SGLang matches each request once per round and takes the result on trust)."""
    match_tiers(s, [req])   # (admission trims a prompt the tree now holds whole, as ever)


def load_back(s: Scheduler, req) -> int:
    """Load the host-only part of ``req``'s prompt back to the device (the request already
    holds a lock on ``req.last_node``); return the tokens loaded (0: below the threshold, or
    no room). On success the request's prefix grows and its lock moves to the loaded node."""
    if not req.host_hit_length:
        return 0
    slots, node = s.engine.load_back(req.last_host_node)
    loaded = len(slots)
    if not loaded:
        return 0
    s.engine.lock(node)          # SGLang: _req_inc_lock_ref on the new last node ...
    s.engine.unlock(req.last_node)   # ... after _lock_node's temporary lock on the old one
    import torch  # the engine loaded it already: here for the command line, which loads it later

    req.prefix_indices = torch.cat([req.prefix_indices, slots])
    req.prefix_len += loaded
    req.extend_input_len -= loaded
    req.last_node, req.host_loaded = node, loaded
    if req.extend_input_len == 0:   # the whole prompt came back: its last token is still computed
        req.prefix_len -= 1
        req.prefix_indices = req.prefix_indices[:req.prefix_len]
        req.extend_input_len = 1
        req.host_loaded -= 1
    return loaded


class HostTierHooks(TodaysHooks):
    """The three places SGLang's scheduler changes for HiRadixCache (above)."""

    if TYPE_CHECKING:   # its steps read the Scheduler's queue and pool, more than LoopHost says
        scheduler: Scheduler

    def start_round(self) -> None:
        # acknowledge the copies that have finished, as SGLang's scheduler does each round
        self.scheduler.engine.check_events()

    def match(self, queue: list) -> bool:
        match_tiers(self.scheduler, queue)
        return True

    def before_batch(self) -> None:
        self.scheduler.engine.start_loads()   # the loads admission queued run before the batch that reads them

    def admission(self) -> dict[str, Any]:
        return {"load_back": partial(load_back, self.scheduler), "rematch": partial(rematch, self.scheduler)}

    def finish(self, stats: SimStats) -> None:
        stats.host_tier = self.scheduler.engine.cache.moved.as_dict()


HOOKS = HostTierHooks


@dataclass(frozen=True)
class HostPoint:
    host_size: int | None     # the host pool's slots; None: the GPU-only baseline
    stats: Any                # SimStats
    settings: dict

    @property
    def label(self) -> str:
        return "GPU only" if self.host_size is None else f"{self.host_size:,}"

    def to_dict(self) -> dict:
        stats = self.stats.to_dict()
        stats.setdefault("device_hit_tokens", self.stats.hit_tokens)
        return {"host_size": self.host_size, "engine": self.settings["engine"], **stats}


def host_options(page_size: int = PAGE.default, eviction_policy: str = EVICTION.default,
                 write_policy: str = WRITE_POLICY.default, host_size: int | None = None,
                 head_bugs: tuple = ()) -> dict:
    """The hicache engine's options for the Scheduler (``engine_options``); ``head_bugs``
    brings back SGLang's 9fbe6800a write_back bugs (engines/hicache/cache_head_bugs.py)."""
    return {"page_size": page_size, "eviction_policy": eviction_policy, "write_policy": write_policy,
            "host_size": host_size, **({"head_bugs": tuple(head_bugs)} if head_bugs else {})}


def run_host_sweep(host_sizes, policy: str = "lpm", *, workload: str | None = None,
                   specs: Sequence[RequestSpec] | None = None,
                   requests: int = 64, pool_size: int = 2048, seed: int = 0, page_size: int = PAGE.default,
                   eviction_policy: str = EVICTION.default, write_policy: str = WRITE_POLICY.default,
                   head_bugs: tuple = (), **options) -> list[HostPoint]:
    """The GPU-only baseline, then the hierarchical cache at each host size, all on the same
    requests (``specs``, or ``workload``'s). ``options`` go to the Scheduler."""
    from radixviz.sim.runner import replay  # imports torch

    traffic = specs if specs is not None else make_workload(workload, requests, seed)
    name = workload or "trace"
    base = replay(traffic, policy, pool_size, seed, workload=name, engine="2026",
                  engine_options={"page_size": page_size, "eviction_policy": eviction_policy}, **options)
    points = [HostPoint(None, base.stats, base.settings)]
    for host in host_sizes:
        result = replay(traffic, policy, pool_size, seed, workload=name, engine="hicache",
                        engine_options=host_options(page_size, eviction_policy, write_policy, host, head_bugs),
                        **options)
        # host None is SGLang's default size: the point names the size the engine took
        points.append(HostPoint(result.settings["host_size"], result.stats, result.settings))
    return points


@dataclass(frozen=True)
class HostRuns:
    """``simulate --engine hicache``: the GPU-only baseline, then a run per host pool size."""
    engine: str
    header: dict
    points: list              # HostPoint

    def to_json(self) -> dict:
        return {**self.header, "results": [p.to_dict() for p in self.points]}


class HostSimulation(TodaysSimulation):
    """One run beside the GPU-only baseline, or ``--sweep host=``; ``--app`` steps one run."""

    def check_sweep(self, key: str) -> None:
        if key != "host":
            raise UsageError(f"--engine {self.spec.name} sweeps host sizes: --sweep host=N,N,...")

    def check(self) -> None:
        self.check_insert()   # the host options are this engine's own

    def cluster_cache(self) -> tuple[int, str | None]:
        raise UsageError(f"--workers runs workers with a device cache only: --engine "
                         f"{flag_owners('pages', without='host_tier')}")

    def prepare(self, options: dict) -> None:
        args, name = self.args, self.spec.name
        page_size, evictions = parse_cache_options(args)
        if len(evictions) > 1:
            raise UsageError(f"--engine {name} runs one eviction policy at a time")
        policies, self.sweep = options.pop("policies"), options.pop("sweep", None)
        if len(policies) > 1 and (args.compare is not None or args.policy):
            raise UsageError(f"--engine {name} runs one scheduling policy at a time: give --policy")
        policies = policies[:1] if args.compare is None else policies   # a sweep's default: lpm alone
        self.policies = [D.POLICY] if self.sweep is not None and not args.policy else policies
        self.host_sizes = self.sweep[1] if self.sweep else [args.host_size]
        pool = options["pool_size"]
        for host in self.host_sizes:
            if host is not None and host <= pool:
                raise UsageError(f"host size {host}: the host pool must be larger than the pool "
                                 f"({pool} slots), as SGLang requires")
            if host is not None and host % page_size:
                raise UsageError(f"host size {host} is not whole pages of {page_size}")
        self.cache = {"page_size": page_size, "eviction_policy": evictions[0],
                      "write_policy": args.write_policy, "head_bugs": args.head_bugs or ()}

    def app_cache(self) -> dict | None:
        return {"engine": self.spec.name,
                "engine_options": host_options(host_size=self.args.host_size, **self.cache)}

    def run(self, specs: Sequence[RequestSpec] | None, name: str, options: dict, progress: Progress) -> Report:
        args, cache = self.args, self.cache
        requests, seed, pool_size = options.pop("requests"), options.pop("seed"), options.pop("pool_size")
        if specs is None:
            specs = make_workload(args.workload, requests, seed)
        points = run_host_sweep(self.host_sizes, self.policies[0], workload=name, specs=specs,
                                pool_size=pool_size, seed=seed, model=args.model, **cache,
                                **later_options(args), **options)
        loop = args.scheduler or RELEASE_LOOP
        first = f"{RELEASE_LOOP} (first release)" if loop == RELEASE_LOOP else loop
        header = {"engine": self.spec.name, "scheduler_loop": f"{first} + host-tier hooks",
                  "page_size": cache["page_size"], "eviction_policy": cache["eviction_policy"],
                  "write_policy": args.write_policy, "policy": self.policies[0], "workload": name,
                  **({"head_bugs": list(args.head_bugs)} if args.head_bugs else {}),
                  "requests": request_count(specs), "pool_size": pool_size, "seed": seed,
                  "baseline": "engine 2026, same page size and eviction policy (GPU only)"}
        return HostRuns(self.spec.name, header, points)


SIMULATION = HostSimulation
