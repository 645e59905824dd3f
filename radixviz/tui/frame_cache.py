"""A small LRU cache of what a view builds from a frame, kept by frame identity.

``functools.lru_cache`` does the caching; frames cannot be its keys themselves (a Frame is a
frozen dataclass holding mappings: it compares by value and does not hash), so each call is
keyed by the frame's identity instead.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from radixviz.script.frames import Frame


class _Same:
    """A frame as a cache key: equal only to the same frame object. The key holds the frame,
    so its id cannot be reused by another frame while the entry is cached."""

    __slots__ = ("frame",)

    def __init__(self, frame: Frame):
        self.frame = frame

    def __hash__(self) -> int:
        return id(self.frame)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.frame is self.frame


def per_frame(maxsize: int = 256):
    """Decorate ``build(frame)``: each frame's result is built once while it stays among the
    ``maxsize`` most recently used. The decorated function has ``cache_clear()``."""
    def decorate(build: Callable[[Frame], Any]):
        @lru_cache(maxsize=maxsize)
        def by_identity(key: _Same):
            return build(key.frame)

        @wraps(build)
        def cached(frame: Frame):
            return by_identity(_Same(frame))
        # a function given attributes, as lru_cache's own: mypy has no type for that
        cached.cache_clear = by_identity.cache_clear   # type: ignore[attr-defined]
        cached.cache_info = by_identity.cache_info   # type: ignore[attr-defined]
        return cached
    return decorate
