"""Today's radix cache (SGLang, March 2026) inside the first release's scheduler loop.

The loop stays the 2024 one: same admission, same order of calls. Only the cache changes:
``TodaysCache`` gives a ModernRadixCache the names that loop calls (``inc_ref_counter`` /
``dec_ref_counter`` for today's ``inc_lock_ref`` / ``dec_lock_ref``) and does the one thing
today's callers do that the 2024 loop does not: a finished sequence is cut to whole pages
before it is inserted, and the slots of the partial last page go back to the pool (as
SGLang's ``cache_finished_req`` frees its unaligned tail). The pool still hands out single
slots, not pages.

    Scheduler(pool_size, "lpm", cache_factory=todays_cache(page_size=16, eviction_policy="lfu"))
"""
from __future__ import annotations

from radixviz.cache import ModernRadixCache


class TodaysCache:
    buggy_match = False  # the #7 switch belongs to the 2024 engine
    takes_priority = True  # the scheduler passes each finished request's priority to insert

    def __init__(self, pool, page_size: int = 1, eviction_policy: str = "lru"):
        self.engine = ModernRadixCache(page_size, eviction_policy, device=pool.device)
        self.pool = pool
        self.page_size = page_size
        self.eviction_policy = self.engine.eviction_policy
        self.match_prefix = self.engine.match_prefix
        self.inc_ref_counter = self.engine.inc_lock_ref
        self.dec_ref_counter = self.engine.dec_lock_ref
        self.evict = self.engine.evict
        self.evictable_size = self.engine.evictable_size
        self.protected_size = self.engine.protected_size
        self.total_size = self.engine.total_size
        self.snapshot = self.engine.snapshot
        # what the Scheduler's settings (and so --json and the app's status line) report
        self.settings = {"engine": "2026", "scheduler_loop": "2024", "page_size": page_size,
                         "eviction_policy": self.eviction_policy}

    @property
    def root_node(self):
        return self.engine.root_node

    def insert(self, key, value=None, priority: int = 0) -> int:
        whole = len(key) - len(key) % self.page_size
        if whole < len(key):
            self.pool.free(value[whole:])  # the partial page is not cached
            key, value = key[:whole], value[:whole]
        return self.engine.insert(key, value, priority)


def todays_cache(page_size: int = 1, eviction_policy: str = "lru"):
    """A cache factory for ``Scheduler(cache_factory=...)``: pool -> TodaysCache."""
    ModernRadixCache(page_size, eviction_policy)  # a bad page size or policy fails here, early
    return lambda pool: TodaysCache(pool, page_size, eviction_policy)
