"""Start a worker holding prompts, as a server that has run a while does (see
wire/held_prompts.py for where they come from)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Warmed:
    tokens: int        # tokens the worker's cache holds after the warm start
    paths: int         # prompts inserted
    too_long: int      # prompts longer than the whole pool: not inserted


def warm_worker(worker, paths) -> Warmed:
    """Insert each of ``paths`` into ``worker``'s cache on fresh slots (evicting the least
    recently inserted when the pool is full, as a running server would have). The engine
    frees the slots of what it held already, and of a partial last page."""
    engine, pool = worker.engine, worker.pool
    inserted = too_long = 0
    for path in paths:
        if len(path) > pool.size:
            too_long += 1
            continue
        slots = pool.alloc(len(path))
        if slots is None:
            engine.evict(len(path) - pool.available_size())
            slots = pool.alloc(len(path))
        if slots is None:             # what is left is locked: nothing a warm start should hit
            too_long += 1
            continue
        engine.insert(list(path), slots)
        inserted += 1
    return Warmed(engine.total_size(), inserted, too_long)
