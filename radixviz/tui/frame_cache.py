"""A small LRU cache keyed by frame identity (frames hold mappings, so they do not hash)."""
from __future__ import annotations

from collections import OrderedDict
from functools import wraps


def per_frame(maxsize: int = 256):
    """Decorate ``build(frame)``: each frame's result is built once while it stays cached."""
    def decorate(build):
        cache: OrderedDict = OrderedDict()

        @wraps(build)
        def cached(frame):
            hit = cache.get(id(frame))
            # the frame itself is kept in the entry, so its id cannot be reused while cached
            if hit is not None and hit[0] is frame:
                cache.move_to_end(id(frame))
                return hit[1]
            value = build(frame)
            cache[id(frame)] = (frame, value)
            if len(cache) > maxsize:
                cache.popitem(last=False)
            return value
        cached.cache_clear = cache.clear
        return cached
    return decorate
