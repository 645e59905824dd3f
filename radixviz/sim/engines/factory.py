"""A cache factory for ``Scheduler(cache_factory=...)``: today's cache (or another engine
that takes pages and an eviction policy) with its settings, opened on each run's pool.

Apart from engines/v2026/sim.py, whose simulation builds on it, so that the sweep runner
(sim/sweep.py) uses it without depending on the simulations that run sweeps.
"""
from __future__ import annotations

from radixviz.cache.engines import engine_spec
from radixviz.cache.options import EVICTION, PAGE


def todays_cache(page_size: int = PAGE.default, eviction_policy: str = EVICTION.default, engine: str = "2026"):
    """A cache factory for ``Scheduler(cache_factory=...)``: pool -> the engine on it. A bad
    page size or policy fails here, early (ValueError)."""
    spec = engine_spec(engine)
    # one frozen settings object for every run's engine (each keeps its own working copy)
    settings = spec.make_settings(1, page_size=page_size, eviction_policy=eviction_policy)   # refuses a bad option now
    return lambda pool: spec.open(pool, settings.replace(pool_size=pool.size))
