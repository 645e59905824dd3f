"""The two write_back bugs of SGLang's ``hiradix_cache.py`` at 9fbe6800a, as a switch.

radixviz's host-tier engine departs from SGLang's file in two places to keep the tree
sound; each departure has a name here, and turning a name on brings SGLang's line back:

- ``load_back_unprotected``: ``load_back`` makes device room (``self.evict``) without
  protecting the host copy it is about to load; under write_back that eviction writes a
  leaf to the host, which may need host room, so ``evict_host`` can free the very host slots
  being loaded and delete their node; the load then copies whatever was written there next
  (another request's KV) and hands it out. radixviz protects the copy (``protect_host``)
  and refuses to load a node deleted since its match.
- ``host_leaf_by_evicted``: ``_update_host_leaf_status`` asks ``child.evicted`` where
  radixviz asks ``child.backuped``: a parent demoted while its child's write-back is still
  on the device counts as a host leaf, and ``evict_host`` deletes it with the child below
  (unreachable, holding host slots); the child's own host eviction later frees the parent's
  host slots a second time.

With a name on, the engine follows SGLang line for line. Where SGLang's file would raise
(its ``assert`` on a node that is no longer its parent's child, or a node popped twice that
has no device slots left to free), radixviz records why in ``cache.head_bug_reports`` and
raises ``HeadBugStop`` there; the outermost operation (``guard``) catches it and returns, with the tree as SGLang's would be when its scheduler died, so the app shows the
damage instead of crashing. The host pool records every slot freed twice (cache_host_pool.py).
"""
from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, Union

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Guarded(Protocol):
    """What ``guard`` needs of a cache (HiRadixCache, cache.py, which imports this module):
    typed by this shape, not by the class, so that the two modules do not import each other."""
    _head_depth: int   # guarded operations running now

HEAD_BUGS = {
    "load_back_unprotected": "load-back evicts the host copy it is loading (9fbe6800a :1036)",
    "host_leaf_by_evicted": "a host leaf may still have a child (9fbe6800a :869)",
}
SHORT = {"load_back_unprotected": "load-back", "host_leaf_by_evicted": "host-leaf"}
# the script's words (``hicache-fixes MODE``): which of the two bugs come back
FIX_MODES = {"on": (), "off": tuple(HEAD_BUGS),
             "load-back-unprotected": ("load_back_unprotected",),
             "host-leaf-by-evicted": ("host_leaf_by_evicted",)}
UPSTREAM = "9fbe6800a"
# what ``check_head_bugs`` reads: names, one comma-separated string, True (all), False/None (none)
HeadBugNames = Union[str, Iterable[str], bool, None]


def check_head_bugs(value: HeadBugNames) -> tuple:
    """The bug names in ``value`` (an iterable of names, or a comma-separated string; "all"
    for both), sorted as HEAD_BUGS lists them; ValueError names an unknown one."""
    if value is None or value is False:
        return ()
    if value is True:
        return tuple(HEAD_BUGS)
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    names: set[str] = set()
    for name in value:
        name = str(name).replace("-", "_").lower()
        if name == "all":
            names.update(HEAD_BUGS)
        elif name in HEAD_BUGS:
            names.add(name)
        else:
            raise ValueError(f"unknown head bug {name!r}: use {', '.join(HEAD_BUGS)} or all")
    return tuple(name for name in HEAD_BUGS if name in names)


def head_bug_words(bugs: Iterable[str]) -> str:
    """``9fbe6800a bugs: load-back, host-leaf`` (empty when none is on)."""
    return f"{UPSTREAM} bugs: {', '.join(SHORT[b] for b in bugs)}" if bugs else ""


def fix_mode(bugs: Iterable[str]) -> str:
    """The ``hicache-fixes`` word that gives ``bugs``."""
    return next(mode for mode, names in FIX_MODES.items() if names == tuple(bugs))


class HeadBugStop(Exception):
    """SGLang's file would raise here (only with a head bug on)."""


# the cache operations a stop may end, with what each returns then
GUARDED: dict[str, Callable[..., Any]] = {
    "insert": lambda cache, *args: 0,
    "evict": lambda cache, *args: 0,
    "evict_host": lambda cache, *args: 0,
    "init_load_back": lambda cache, node, *args: (cache._empty, cache._deepest_device_node(node)),
}


def guard(cache: Guarded, on: bool) -> None:
    """While a head bug is on, give ``cache`` instance-level versions of the GUARDED
    operations: a ``HeadBugStop`` raised inside one (however deep) ends the outermost, which
    returns its default; nested calls let it through. Off, the class's own methods serve
    again, so the fixed engine pays nothing for the switch."""
    for name, default in GUARDED.items():
        if not on:
            cache.__dict__.pop(name, None)
        elif name not in cache.__dict__:
            cache.__dict__[name] = _stopping(cache, getattr(type(cache), name).__get__(cache), default)


def _stopping(cache: Guarded, method: Callable[..., Any], default: Callable[..., Any]):
    @functools.wraps(method)
    def run(*args: Any, **kwargs: Any):
        outermost = not cache._head_depth
        cache._head_depth += 1
        try:
            return method(*args, **kwargs)
        except HeadBugStop:
            if not outermost:
                raise
            return default(cache, *args)   # the report is in head_bug_reports already
        finally:
            cache._head_depth -= 1
    return run
