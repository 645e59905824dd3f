"""One engine behind the verbs every caller uses: a session, the scheduler, the KV check, the
compare columns and the lesson checker all drive an engine through this class, never through
its own method names (``inc_ref_counter`` in 2024, ``inc_lock_ref`` in 2026).

``Engine`` is the contract every engine implements (typed, its results named tuples, its
memory declared: contract.py). It owns the live cache (``.cache``, the engine's own object,
typed by the subclass, which views and tests may read) and frees slots into its pool
(``.pool``) where the callers of each release did: an insert frees the slots of tokens the tree
already held and of a partial last page, an eviction frees each evicted leaf's slots. Each
engine's wing subclasses it (``engines/v2024/engine.py``) with the few calls that differ;
engines.py opens them.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

import torch

from .contract import DEVICE, CacheNode, Component, Declared, Evicted, FreedSlots, Matched, SlotPool, TracedCache

if TYPE_CHECKING:
    from .kv_events import KVEvent
    from .options import EngineSettings
    from .pool import TokenToKVPool
    from .snapshot import MatchPreview, TreeSnapshot
    from .trace import Event

CacheT = TypeVar("CacheT", bound=TracedCache)   # the engine's own cache class
NodeT = TypeVar("NodeT", bound=CacheNode)      # the engine's own node class


class Inserted(NamedTuple):
    """What an insert did with the slots it was handed."""
    prefix_len: int              # leading tokens the tree already held (the engine's return)
    new_slots: torch.Tensor      # the slots the tree took for the tokens it did not hold
    duplicates: torch.Tensor     # freed: the request's copies of tokens the tree already held
    tail: torch.Tensor           # freed: the partial last page, which is not cached


class Engine(ABC, Generic[CacheT, NodeT]):
    """An engine's live cache on a KV pool, behind the same verbs as every other engine.

    A subclass supplies the abstract methods (its own names for the same acts) and declares
    its memory (``memory``, ``extra_pools``, ``evict_component``) where it keeps more than the
    pool's slots; the shared verbs below are written once on top of them and of the cache's
    ``match_prefix``, ``insert``, ``evict``, ``reset``, ``snapshot`` and sizes."""

    # the kinds of memory it keeps, the backbone (the pool's slots) first: contract.py
    memory: tuple[Component, ...] = (DEVICE,)

    def __init__(self, spec: Declared, pool: TokenToKVPool, settings: EngineSettings) -> None:
        self.spec = spec                 # its registry line (engines.EngineSpec): name, options, capabilities
        self.pool = pool
        self.settings = settings         # checked when made; a live change replaces it (change)
        self.cache: CacheT = self.make_cache()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def page_size(self) -> int:
        """Tokens per page: the tree caches whole pages only (1 for an engine without pages)."""
        size = getattr(self.settings, "page_size", 1)   # a field of the engines that have pages
        return size if isinstance(size, int) else 1

    def __repr__(self) -> str:
        return f"Engine({self.spec.badge(self.settings)!r}, pool={self.pool!r})"

    # --------------------------------------------------- what each engine supplies

    @abstractmethod
    def make_cache(self) -> CacheT:
        """The engine's own cache object, empty, for ``self.settings`` and ``self.pool``.

        Precondition: ``self.settings`` was made by this engine's spec (every option has its
        value, checked), and ``self.pool`` is empty or freshly reset."""

    @abstractmethod
    def lock(self, node: NodeT) -> int:
        """Lock the path from ``node`` to the root; return the change in evictable size (<= 0).

        Precondition: ``node`` is a node of this engine's live tree (from ``match`` since the
        last reset). An engine whose locks hand out receipts keeps them, by node."""

    @abstractmethod
    def unlock(self, node: NodeT) -> int:
        """Release a lock taken at ``node``; return the change in evictable size (>= 0).

        Precondition: ``node`` is a node of the live tree. A lock nobody took there is a
        ValueError that changes nothing."""

    @abstractmethod
    def check_invariants(self, held: Sequence[torch.Tensor | Sequence[int]] = ()) -> None:
        """Raise InvariantError if the tree or the pool is inconsistent.

        Precondition: ``held`` lists every slot running requests hold outside the tree (a
        slot neither in the tree nor free nor held is a leak)."""

    @abstractmethod
    def preview(self, key: Sequence[int], extra_key: str | None = None) -> MatchPreview:
        """What ``match(key)`` would return now, touching nothing (no split, no access time).

        Precondition: ``key`` is a sequence of token ids; ``extra_key`` is None unless the
        engine has namespaces."""

    @abstractmethod
    def match_key(self, key: Sequence[int], extra_key: str | None) -> Matched:
        """The engine's own match: ``(slots, last node)`` of the longest cached prefix (a node
        may be split). Precondition: ``extra_key`` is None unless the engine has namespaces."""

    @abstractmethod
    def insert_key(self, key: Sequence[int], slots: torch.Tensor, priority: int | None,
                   extra_key: str | None = None) -> int:
        """The engine's own insert of whole pages; returns the prefix length it held.

        Preconditions: ``len(key)`` is a whole number of pages and ``len(slots) == len(key)``
        (``strict=False`` on the 2024 engine allows one fewer); only an engine with namespaces
        is given an ``extra_key`` (``insert`` refuses one first)."""

    @abstractmethod
    def evict_backbone(self, num_tokens: int, release: Callable[[torch.Tensor], int]) -> None:
        """The engine's own eviction of its first component: ``release(slots)`` frees each
        evicted stretch into the pool and returns how many became free."""

    def evict_component(self, component: Component, num_tokens: int, freed: FreedSlots | None) -> int:
        """Evict ``num_tokens`` of a component other than the first (its own eviction; a node
        may lose that component's data and stay); return how many of its slots became free.
        An engine that declares more memory overrides it."""
        raise ValueError(f"engine {self.name} cannot evict {component.name} on its own")

    def extra_pools(self) -> tuple[SlotPool, ...]:
        """The pools of the components after the first that have one (``Component.pooled``),
        in declared order: what a session pictures beside ``pool`` each step."""
        return ()

    def change(self, option: str, value: object) -> None:
        """Change an option the live cache can change in place (the #7 matcher, an eviction
        policy); ValueError for one that needs a fresh cache."""
        raise ValueError(f"engine {self.name} cannot change {option} on a live cache")

    def reported_settings(self) -> dict[str, object]:
        """The options a run reports (a simulation's settings): all of them by default."""
        return dict(self.settings)

    def wrap_key_match(self, wrapper: Callable[[Callable[..., int]], Callable[..., int]]) -> None:
        """Let a caller wrap the engine's edge comparison (``wrapper(key_match) -> key_match``),
        where the engine has one to wrap: the simulation remembers answers it asks again.
        An engine without one (a trie compares one token at a time) ignores the wrapper."""
        del wrapper

    # ----------------------------------------------------------- the shared verbs

    def match(self, key: Sequence[int], extra_key: str | None = None) -> Matched:
        """``(slots, last_node)`` of the longest cached prefix of ``key`` (may split a node),
        within namespace ``extra_key`` (ValueError on an engine without namespaces)."""
        if extra_key is not None:
            self.need("namespaces")
        return self.match_key(key, extra_key)

    def need(self, capability: str) -> None:
        """ValueError naming the engines that have ``capability``, if this one has not."""
        if not self.spec.has(capability):
            raise ValueError(self.spec.lacks(capability))

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

    def evict(self, num_tokens: int, freed: FreedSlots | None = None, component: str | None = None) -> int:
        """Evict until ``num_tokens`` tokens of ``component`` (a declared name; None: the first,
        the tree's backbone, whose leaves leave the tree) are gone or nothing evictable is
        left; each stretch of slots goes back to its pool, ``freed(slots)`` is told of each.
        Returns how many slots became free. ValueError names the components there are."""
        if component is not None and component != self.memory[0].name:
            return self.evict_component(self.component(component), num_tokens, freed)
        total = 0
        pool = self.pool

        def release(slots: torch.Tensor) -> int:
            nonlocal total
            count = pool.free(slots)
            total += count
            if freed is not None:
                freed(slots)
            return count
        self.evict_backbone(num_tokens, release)
        return total

    def evicted(self, num_tokens: int, component: str | None = None) -> Evicted:
        """``evict`` as a named result: the component and how many of its slots became free."""
        chosen = self.memory[0] if component is None else self.component(component)
        return Evicted(chosen.name, self.evict(num_tokens, component=chosen.name))

    def component(self, name: str) -> Component:
        """The declared component called ``name``; ValueError names those there are."""
        for declared in self.memory:
            if declared.name == name:
                return declared
        raise ValueError(f"engine {self.name} keeps no {name!r} memory: its components are "
                         f"{', '.join(c.name for c in self.memory)}")

    def take_events(self) -> list[KVEvent]:
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
    def root_node(self) -> CacheNode:
        return self.cache.root_node

    @property
    def observer(self) -> Callable[[Event], None] | None:
        return self.cache.observer

    @observer.setter
    def observer(self, callback: Callable[[Event], None] | None) -> None:
        """Attach a callable that receives every micro-step as a trace.Event (None detaches)."""
        self.cache.observer = callback


# an engine whatever its cache and node: what shared code holds
CacheEngine = Engine[TracedCache, CacheNode]
