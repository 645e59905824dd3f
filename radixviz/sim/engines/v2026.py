"""Today's radix cache (SGLang, March 2026) inside the first release's scheduler loop.

The loop stays the 2024 one: same admission, same order of calls. Only the engine changes,
and the facade every caller uses (radixviz/cache/facade.py) does what today's callers do and
the 2024 loop does not: a finished sequence is cut to whole pages before it is inserted, and
the slots of the partial last page go back to the pool (as SGLang's ``cache_finished_req``
frees its unaligned tail). The pool still hands out single slots, not pages.

    Scheduler(pool_size, "lpm", cache_factory=todays_cache(page_size=16, eviction_policy="lfu"))

is the same as ``Scheduler(pool_size, "lpm", engine="2026", engine_options={...})``.
"""
from __future__ import annotations

from radixviz.cache import TokenToKVPool
from radixviz.cache.engines import engine_spec
from radixviz.cache.options import EVICTION, PAGE

from . import LoopHooks


class TodaysHooks(LoopHooks):
    """Today's cache in the 2024 loop: a finished request's priority reaches its insert."""

    priority_at_insert = True


HOOKS = TodaysHooks


def todays_cache(page_size: int = PAGE.default, eviction_policy: str = EVICTION.default, engine: str = "2026"):
    """A cache factory for ``Scheduler(cache_factory=...)``: pool -> the engine on it. A bad
    page size or policy fails here, early (ValueError)."""
    spec = engine_spec(engine)
    options = spec.settings(page_size=page_size, eviction_policy=eviction_policy)
    spec.open(TokenToKVPool(1, device="cpu"), **options)   # refuses a bad option now
    return lambda pool: spec.open(pool, **options)
