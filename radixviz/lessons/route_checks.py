"""Prediction checks about routing, computed by the simulation's own router and cluster code.

- ``route.ROUTER.N`` / ``routes.ROUTER.N``: the block's ``match`` operations stand for
  requests arriving, in order, at ROUTER in front of N workers (``sim.routers``, SGLang's
  thresholds); each worker's load is the requests placed on it so far (none finishes). The
  worker chosen for the last request, or for every request in order;
- ``best_hit.WORKLOAD`` (or ``best_hit.WORKLOAD.R1/R2/...`` among those routers only): the
  router with the highest hit rate in ``radixviz simulate --workers 4 --workload WORKLOAD``;
- ``over_half.WORKLOAD.ROUTER``: ``yes`` if one worker took more than half of that run's
  requests, else ``no``. ROUTER may be ``cache-only``: cache-aware with the balance
  thresholds off.
"""
from __future__ import annotations

from functools import lru_cache

from radixviz.sim.routers import Load, make_router

CACHE_ONLY = "cache-only"   # as radixviz.sim.cluster names it (that module loads torch)

ROUTERS = ("round-robin", "random", "least-load", "cache-aware", "cache-aware-events")
PREFIXES = ("route.", "routes.", "best_hit.", "over_half.")


def is_route_check(check: str) -> bool:
    return check.startswith(PREFIXES)


def route_value(check: str, records):
    """What the router or the simulation says for ``check``; KeyError when it is not one."""
    kind, _, rest = check.partition(".")
    if kind in ("route", "routes"):
        router, _, workers = rest.rpartition(".")
        if router not in ROUTERS or not workers.isdigit() or int(workers) < 1:
            raise KeyError(check)
        chosen = placements(router, int(workers), [r.op.key for r in records if r.op.name == "match"])
        return chosen[-1] if kind == "route" else chosen
    if kind == "best_hit":
        workload, _, among = rest.partition(".")
        names = tuple(among.split("/")) if among else ROUTERS
        rates = {name: _run(workload, name).hit_rate for name in names}
        return max(rates, key=rates.get)
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
    chooser = make_router(router, workers)
    placed = [0] * workers
    chosen = []
    for key in keys:
        worker = chooser.route(tuple(key), [Load(n, 0) for n in placed]).worker
        placed[worker] += 1
        chosen.append(worker)
    return chosen


@lru_cache(maxsize=32)
def _run(workload: str, router: str):
    from radixviz.sim.cluster import run_router   # the workers' engines load torch: only here

    if router not in ROUTERS + (CACHE_ONLY,):
        raise KeyError(router)
    try:
        return run_router(workload, router)
    except ValueError:
        raise KeyError(workload) from None
