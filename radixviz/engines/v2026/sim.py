"""Today's radix cache (SGLang, March 2026) inside the first release's scheduler loop.

The loop stays the 2024 one: same admission, same order of calls. Only the engine changes,
and the facade every caller uses (radixviz/cache/facade.py) does what today's callers do and
the 2024 loop does not: a finished sequence is cut to whole pages before it is inserted, and
the slots of the partial last page go back to the pool (as SGLang's ``cache_finished_req``
frees its unaligned tail). The pool still hands out single slots, not pages.

    Scheduler(pool_size, "lpm", cache_factory=todays_cache(page_size=16, eviction_policy="lfu"))

is the same as ``Scheduler(pool_size, "lpm", engine="2026", engine_options={...})``
(``todays_cache`` lives in factory.py). ``TodaysSimulation`` is what ``simulate --engine 2026``
does: pages, several eviction policies on the same requests, ``--sweep page=``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from radixviz.cache.evict_policy import POLICY_NAMES
from radixviz.errors import UsageError
from radixviz.limits import PAGE_SIZE

from radixviz.sim import defaults as D
from radixviz.sim.schedule_v0523 import RELEASE_LOOP, loop_words
from radixviz.sim.workloads import make_workload, request_count
from radixviz.sim.engines import LoopHooks
from radixviz.sim.engines.factory import todays_cache
from radixviz.sim.engines.simulate import (PolicyRuns, Progress, Report, Simulation, SimulateArgs, later_options,
                                           owners, run_sweep)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from radixviz.sim.request import RequestSpec

LOOP_NOTE = ("scheduler loop: SGLang's first release (January 2024), unchanged; "
             "cache: SGLang's radix cache of March 2026")


class TodaysHooks(LoopHooks):
    """Today's cache in the 2024 loop: a finished request's priority reaches its insert."""

    priority_at_insert = True


HOOKS = TodaysHooks


def parse_cache_options(args: SimulateArgs) -> tuple[int, list]:
    """(page size, eviction policies) from the command line; UsageError on a bad one."""
    try:
        page_size = PAGE_SIZE.parse(args.page_size)
    except ValueError as exc:
        raise UsageError(f"--page-size {exc}") from None
    names = [n.strip().lower() for n in args.eviction_policy.split(",") if n.strip()]
    if not names:
        raise UsageError(f"--eviction-policy needs names, e.g. {','.join(POLICY_NAMES)}")
    bad = [n for n in names if n not in POLICY_NAMES]
    if bad:
        raise UsageError(f"unknown eviction policy {bad[0]!r}: choose from {', '.join(POLICY_NAMES)}")
    return page_size, list(dict.fromkeys(names))


class TodaysSimulation(Simulation):
    """``simulate --engine 2026``: only the cache is from 2026, the loop is still the 2024
    one (and the report says so). ``--eviction-policy lru,lfu,...`` runs every named
    eviction policy on the same requests, a row each; ``--sweep page=`` varies the pages.
    Requests' priorities reach the cache at insert, the one place SGLang's scheduler passes them."""

    def check_sweep(self, key: str) -> None:
        if key == "host":
            raise UsageError(f"--sweep host= varies the host tier's size: add --engine {owners('host_tier')}")

    def cluster_cache(self) -> tuple[int, str | None]:
        page_size, evictions = parse_cache_options(self.args)
        if len(evictions) > 1:
            raise UsageError("--workers runs one eviction policy: give one --eviction-policy")
        return page_size, evictions[0]

    def prepare(self, options: dict) -> None:
        args = self.args
        self.page_size, self.evictions = parse_cache_options(args)
        policies, self.sweep = options.pop("policies"), options.pop("sweep", None)
        if len(policies) > 1 and len(self.evictions) > 1:
            if self.sweep is None or args.compare is not None or args.policy:
                raise UsageError("compare scheduling policies or eviction policies, not both at once")
            policies = [D.POLICY]   # a sweep's default of every scheduling policy gives way
        self.policies = policies
        self.caches = {eviction: todays_cache(self.page_size, eviction, engine=args.engine)
                       for eviction in self.evictions}

    def app_cache(self) -> dict | None:
        if len(self.evictions) > 1:
            raise UsageError("--app shows one eviction policy at a time: give one --eviction-policy")
        # the screen opens this engine with these options; its form shows a field for each
        return {"engine": self.spec.name,
                "engine_options": {"page_size": self.page_size, "eviction_policy": self.evictions[0]}}

    def run(self, specs: Sequence[RequestSpec] | None, name: str, options: dict, progress: Progress) -> Report:
        from radixviz.sim.runner import replay  # imports torch

        args, sweep, page_size, evictions = self.args, self.sweep, self.page_size, self.evictions
        common = {"model": args.model, **later_options(args)}
        pages: Any = sweep[1] if sweep is not None and sweep[0] == "page" else page_size
        loop = args.scheduler or RELEASE_LOOP
        note = LOOP_NOTE if loop == RELEASE_LOOP else (f"scheduler loop: {loop_words(loop)}; cache: SGLang's "
                                                       "radix cache of March 2026")
        header = {"engine": args.engine,
                  "scheduler_loop": f"{RELEASE_LOOP} (first release, unchanged)" if loop == RELEASE_LOOP else loop,
                  "page_size": pages, "eviction_policies": evictions,
                  "note": f"{note}, page size {', '.join(map(str, pages)) if pages != page_size else page_size}, "
                          f"eviction {', '.join(evictions)}"}
        if sweep is not None:
            cache = {"evictions": evictions, "page_size": page_size}
            return run_sweep(self.spec.name, name, sweep, self.policies, specs, options, {**common, **cache}, header)
        requests, pool_size, seed = (options.pop(k) for k in ("requests", "pool_size", "seed"))
        if specs is None:
            specs = make_workload(args.workload, requests, seed)
        results = {}
        for policy in self.policies:
            for eviction in evictions:
                shown = progress(f"{policy}, {eviction}", request_count(specs))
                result = replay(specs, policy, pool_size, seed, workload=name, progress=shown,
                                cache_factory=self.caches[eviction], **common, **options)
                if shown is not None:
                    shown.done()
                results[eviction if len(evictions) > 1 else policy] = result
        table = "evictions" if len(evictions) > 1 else "compare" if len(results) > 1 else "single"
        return PolicyRuns(self.spec.name, name, results, table, header)


SIMULATION = TodaysSimulation
