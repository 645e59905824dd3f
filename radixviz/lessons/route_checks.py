"""Prediction checks about routing, computed by the simulation's own router and cluster code.

- ``route.ROUTER.N`` / ``routes.ROUTER.N``: the block's ``match`` operations stand for
  requests arriving, in order, at ROUTER in front of N workers (``sim.routers``, SGLang's
  thresholds as its launcher sets them); each worker's load is the requests placed on it so
  far (none finishes). The worker chosen for the last request, or for every request in order;
  ROUTER may be ``cache-aware-library``: cache-aware with ``CacheAwareConfig::default()``;
- ``reused.ROUTER.N``: placed the same way, the tokens of all the requests that find their KV
  already on their worker (each request's longest common prefix with an earlier request on
  the same worker; nothing is evicted);
- ``best_hit.WORKLOAD`` (or ``best_hit.WORKLOAD.R1/R2/...`` among those routers only): the
  router with the highest hit rate in ``radixviz simulate --workers 4 --workload WORKLOAD``;
- ``over_half.WORKLOAD.ROUTER``: ``yes`` if one worker took more than half of that run's
  requests, else ``no``. ROUTER may be ``cache-only``: cache-aware with the balance
  thresholds off, or ``cache-aware-library``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from functools import lru_cache

from radixviz.sim.routers import LAUNCHED_DEFAULTS, LIBRARY_DEFAULTS, Load, make_router

if TYPE_CHECKING:
    from collections.abc import Sequence
    from radixviz.script.frames import OpRecord

CACHE_ONLY = "cache-only"   # as radixviz.sim.cluster names it (that module loads torch)
CACHE_LIBRARY = "cache-aware-library"   # cache-aware with the Rust library's own defaults

ROUTERS = ("round-robin", "random", "least-load", "cache-aware", "cache-aware-events")
PREFIXES = ("route.", "routes.", "reused.", "best_hit.", "over_half.")


def is_route_check(check: str) -> bool:
    return check.startswith(PREFIXES)


def route_value(check: str, records: Sequence[OpRecord]):
    """What the router or the simulation says for ``check``; KeyError when it is not one."""
    kind, _, rest = check.partition(".")
    if kind in ("route", "routes", "reused"):
        router, _, workers = rest.rpartition(".")
        if router not in ROUTERS + (CACHE_LIBRARY,) or not workers.isdigit() or int(workers) < 1:
            raise KeyError(check)
        keys = [r.op.key for r in records if r.op.name == "match"]
        chosen = placements(router, int(workers), keys)
        if kind == "reused":
            return reused_tokens(keys, chosen)
        return chosen[-1] if kind == "route" else chosen
    if kind == "best_hit":
        workload, _, among = rest.partition(".")
        names = tuple(among.split("/")) if among else ROUTERS
        rates = {name: _run(workload, name).hit_rate for name in names}
        return max(rates, key=rates.__getitem__)
    if kind == "over_half":
        workload, _, router = rest.partition(".")
        result = _run(workload, router)
        busiest = max(w["requests"] for w in result.per_worker())
        return "yes" if busiest * 2 > len(result.routes) else "no"
    raise KeyError(check)


def placements(router: str, workers: int, keys: list) -> list:
    """The worker ``router`` picks for each key in turn (loads: requests placed so far)."""
    if not keys:
        raise KeyError("no match operations in the block to route")
    config = LIBRARY_DEFAULTS if router == CACHE_LIBRARY else LAUNCHED_DEFAULTS
    chooser = make_router("cache-aware" if router == CACHE_LIBRARY else router, workers, config)
    placed = [0] * workers
    chosen = []
    for key in keys:
        worker = chooser.route(tuple(key), [Load(n, 0) for n in placed]).worker
        placed[worker] += 1
        chosen.append(worker)
    return chosen


def reused_tokens(keys: list, chosen: list) -> int:
    """Tokens found on their worker: each key's longest common prefix with the keys placed on
    the same worker before it (a worker keeps all it computed)."""
    def shared(a, b):
        return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    total = 0
    for i, (key, worker) in enumerate(zip(keys, chosen)):
        total += max((shared(key, keys[j]) for j in range(i) if chosen[j] == worker), default=0)
    return total


@lru_cache(maxsize=32)
def _run(workload: str, router: str):
    from radixviz.sim.cluster import run_router   # the workers' engines load torch: only here

    if router not in ROUTERS + (CACHE_ONLY, CACHE_LIBRARY):
        raise KeyError(router)
    try:
        return run_router(workload, router)
    except ValueError:
        raise KeyError(workload) from None
