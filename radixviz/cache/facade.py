"""One engine behind the verbs every caller uses: a session, the scheduler, the KV check, the
compare columns and the lesson checker all drive an engine through this class, never through
its own method names (``inc_ref_counter`` in 2024, ``inc_lock_ref`` in 2026).

An ``Engine`` owns the live cache (``.cache``, the engine's own object, which views and tests
may read) and frees slots into its pool (``.pool``) where the callers of each release did:
an insert frees the slots of tokens the tree already held and of a partial last page, an
eviction frees each evicted leaf's slots. Each engine's subpackage subclasses it
(``v2024.Engine``, ``v2026.Engine``) with the few calls that differ; engines.py opens them.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from .engines import engines_with

if TYPE_CHECKING:
    from .engines import EngineSpec
    from .pool import TokenToKVPool
    from .snapshot import MatchPreview, TreeSnapshot

# An engine's own node class (v2024.TreeNode, v2026.TreeNode, ...): the facade hands it back
# from ``match`` and takes it in ``lock``/``unlock`` without looking inside.
Node = Any


class Inserted(NamedTuple):
    """What an insert did with the slots it was handed."""
    prefix_len: int              # leading tokens the tree already held (the engine's return)
    new_slots: torch.Tensor      # the slots the tree took for the tokens it did not hold
    duplicates: torch.Tensor     # freed: the request's copies of tokens the tree already held
    tail: torch.Tensor           # freed: the partial last page, which is not cached


class Engine(ABC):
    """An engine's live cache on a KV pool, behind the same verbs as every other engine.

    A subclass supplies the five abstract methods (its own names for the same acts); the
    shared verbs below are written once on top of them and of the cache's ``match_prefix``,
    ``insert``, ``evict``, ``reset``, ``snapshot`` and sizes."""

    def __init__(self, spec: EngineSpec, pool: TokenToKVPool, settings: Mapping[str, Any]) -> None:
        self.spec = spec                 # engines.EngineSpec: name, options, capabilities
        self.pool = pool
        self.settings = dict(settings)   # the options in force (a script may change some)
        self.cache = self.make_cache()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def page_size(self) -> int:
        """Tokens per page: the tree caches whole pages only (1 for an engine without pages)."""
        return self.settings.get("page_size", 1)

    def __repr__(self) -> str:
        return f"Engine({self.spec.badge(self.settings)!r}, pool={self.pool!r})"

    # --------------------------------------------------- what each engine supplies

    @abstractmethod
    def make_cache(self) -> Any:
        """The engine's own cache object, empty, for ``self.settings`` and ``self.pool``.

        Precondition: ``self.settings`` holds every option of ``self.spec`` (spec.settings
        filled in the defaults), and ``self.pool`` is empty or freshly reset."""

    @abstractmethod
    def lock(self, node: Node) -> int:
        """Lock the path from ``node`` to the root; return the change in evictable size (<= 0).

        Precondition: ``node`` is a node of this engine's live tree (from ``match`` since the
        last reset)."""

    @abstractmethod
    def unlock(self, node: Node) -> int:
        """Release a lock taken at ``node``; return the change in evictable size (>= 0).

        Precondition: ``node`` is a node of the live tree. A lock nobody took there is a
        ValueError that changes nothing."""

    @abstractmethod
    def check_invariants(self, held: Sequence[torch.Tensor | Sequence[int]] = ()) -> None:
        """Raise InvariantError if the tree or the pool is inconsistent.

        Precondition: ``held`` lists every slot running requests hold outside the tree (a
        slot neither in the tree nor free nor held is a leak)."""

    @abstractmethod
    def preview(self, key: Sequence[int]) -> MatchPreview:
        """What ``match(key)`` would return now, touching nothing (no split, no access time).

        Precondition: ``key`` is a sequence of token ids. An engine with namespaces also
        takes ``extra_key``."""

    def insert_key(self, key: Sequence[int], slots: torch.Tensor, priority: int | None,
                   extra_key: str | None = None) -> int:
        """The engine's own insert of whole pages; returns the prefix length it held.

        Preconditions: ``len(key)`` is a whole number of pages and ``len(slots) == len(key)``
        (``strict=False`` on the 2024 engine allows one fewer); only an engine with namespaces
        is given an ``extra_key`` (``insert`` refuses one first)."""
        return self.cache.insert(key, slots)

    def change(self, option: str, value: Any) -> None:
        """Change an option the live cache can change in place (the #7 matcher, an eviction
        policy); ValueError for one that needs a fresh cache."""
        raise ValueError(f"engine {self.name} cannot change {option} on a live cache")

    def reported_settings(self) -> dict[str, Any]:
        """The options a run reports (a simulation's settings): all of them by default."""
        return dict(self.settings)

    def wrap_key_match(self, wrapper: Callable[[Callable], Callable]) -> None:
        """Let a caller wrap the engine's edge comparison (``wrapper(key_match) -> key_match``),
        where the engine has one to wrap: the simulation remembers answers it asks again.
        An engine without one (a trie compares one token at a time) ignores the wrapper."""
        del wrapper

    # ----------------------------------------------------------- the shared verbs

    def match(self, key: Sequence[int], extra_key: str | None = None) -> tuple[torch.Tensor, Node]:
        """``(slots, last_node)`` of the longest cached prefix of ``key`` (may split a node),
        within namespace ``extra_key`` (ValueError on an engine without namespaces)."""
        if extra_key is None:
            return self.cache.match_prefix(key)
        self.need("namespaces")
        return self.cache.match_prefix(key, extra_key)

    def need(self, capability: str) -> None:
        """ValueError naming the engines that have ``capability``, if this one has not."""
        if not self.spec.has(capability):
            owners = " or ".join(spec.name for spec in engines_with(capability)) or "no"
            raise ValueError(f"engine {self.name} has no {capability.replace('_', ' ')}: "
                             f"that is the {owners} engine's")

    def whole_pages(self, length: int) -> int:
        """How many of ``length`` tokens fill whole pages."""
        return length - length % self.page_size

    def insert(self, key: Sequence[int], slots: torch.Tensor, priority: int | None = None,
               freed: Callable[[str, torch.Tensor], None] | None = None,
               extra_key: str | None = None) -> Inserted:
        """Insert ``key`` with its ``slots`` (one reference each, handed over by the caller).

        As SGLang's callers do, the key is cut to whole pages first; the tree keeps the slots
        of the tokens it did not hold, and the rest go back to the pool: the duplicates of
        tokens it already held, then the partial last page. ``freed(what, slots)`` is told of
        each ("duplicates", "tail") just after it is freed. ``priority`` reaches engines that
        have priorities, ``extra_key`` (a namespace) engines that have namespaces. If the engine
        refuses the insert (ValueError, TypeError), every slot handed over goes back to the
        pool before the error propagates.
        """
        whole = self.whole_pages(len(key))
        kept, tail = slots[:whole], slots[whole:]
        try:
            if extra_key is None:
                prefix_len = self.insert_key(key[:whole], kept, priority)
            else:
                self.need("namespaces")
                prefix_len = self.insert_key(key[:whole], kept, priority, extra_key=extra_key)
        except (ValueError, TypeError):
            self.pool.free(slots)
            raise
        duplicates = kept[:prefix_len]
        if prefix_len:
            self.pool.free(duplicates)  # step: free_dup
            if freed is not None:
                freed("duplicates", duplicates)
        if len(tail):
            self.pool.free(tail)  # step: free_tail
            if freed is not None:
                freed("tail", tail)
        return Inserted(prefix_len, kept[prefix_len:], duplicates, tail)

    def evict(self, num_tokens: int, freed: Callable[[torch.Tensor], None] | None = None) -> int:
        """Evict leaves until ``num_tokens`` tokens are gone (or nothing evictable is left);
        each leaf's slots go back to the pool, ``freed(slots)`` is told of each. Returns how
        many slots became free."""
        total = 0
        pool = self.pool

        def release(slots: torch.Tensor) -> int:
            nonlocal total
            count = pool.free(slots)
            total += count
            if freed is not None:
                freed(slots)
            return count
        self.cache.evict(num_tokens, release)
        return total

    def take_events(self) -> list[Any]:
        """The KV events (kv_events.py) queued since the last call, oldest first; the queue is
        empty after. Always empty for an engine without KV events (this base: an engine that
        has them overrides it) or with them off."""
        return []

    def reset(self, pool: TokenToKVPool | None = None) -> None:
        """Empty the tree (on ``pool`` from now on, when given: a reset's fresh pool)."""
        if pool is not None:
            self.pool = pool
        self.cache.reset()

    def snapshot(self) -> TreeSnapshot:
        """An immutable picture of the whole tree (its ``engine`` field names this engine)."""
        return self.cache.snapshot()

    def evictable_size(self) -> int:
        return self.cache.evictable_size()

    def protected_size(self) -> int:
        """Tokens on locked nodes, for engines that count them apart (else 0)."""
        return 0

    def total_size(self) -> int:
        return self.cache.total_size()

    @property
    def root_node(self) -> Node:
        return self.cache.root_node

    @property
    def observer(self) -> Callable | None:
        return self.cache.observer

    @observer.setter
    def observer(self, callback: Callable | None) -> None:
        """Attach a callable that receives every micro-step as a trace.Event (None detaches)."""
        self.cache.observer = callback
