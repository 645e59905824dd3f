"""SGLang v0.5.23's unified tree behind the facade's verbs (radixviz/cache/facade.py).

The cache (cache.py) takes SGLang's calls: a match, an insert with its request's slots, Mamba
state, matched prefix and SWA evicted length, locks that hand out receipts, an eviction
asking each component for an amount. ``Engine`` maps the verbs every caller uses onto them:

- its pool is the cache's own Full allocator behind ``TokenToKVPool``'s calls
  (cache_facade_pool.py), so slots come out in SGLang's order, slot 0 never;
- ``insert`` is a request's end (``cache_finished_req``): the slots it hands over that are
  the tree's own (the prefix it matched) are its ``prev_prefix_len``, those whose SWA peer it
  gave up already its SWA evicted length, and it brings a Mamba state, a fresh slot;
- ``lock`` keeps the receipt by node, and with the mamba component gives the holder its own
  Mamba slot with a copy of the matched state (SGLang's copy-on-write), freed by ``unlock``;
- ``evict N COMPONENT`` is the cache's eviction of that component alone.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import torch

from radixviz.cache.contract import Component, FreedSlots, Matched
from radixviz.cache.evict_policy import eviction_key
from radixviz.cache.facade import Engine as _Facade, Inserted
from radixviz.cache.options import (COMPONENTS, EVICTION, KV_EVENTS, MAMBA_CHUNK, MAMBA_PER_PATH, MAMBA_POOL, PAGE, SWA_POOL,
                                    WINDOW, default_mamba_pool)
from .cache import UnifiedRadixCache
from .cache_counted import CountedMambaPool, CountedPages, CountedSWAPages
from .cache_facade_pool import KVPool, MambaPicture, SWAPicture
from .cache_params import EvictParams, InsertParams, MatchPrefixParams, MatchResult, Req
from .engine_loop import Held, InsertedAs, LoopVerbs
from .invariants_pools import check_facade_pools
from .node import ComponentType, UnifiedTreeNode
from .preview import preview_match
from .snapshot import DECLARED

if TYPE_CHECKING:
    from radixviz.cache.contract import SlotPool
    from radixviz.cache.kv_events import KVEvent
    from radixviz.cache.pool import TokenToKVPool
    from radixviz.cache.snapshot import MatchPreview

FULL, SWA, MAMBA = ComponentType.FULL, ComponentType.SWA, ComponentType.MAMBA


# SGLang's ``total_size`` is a pair (Full tokens, the other components'), where the contract's
# TracedCache says one number: the facade's ``total_size`` below gives the Full tokens
class Engine(LoopVerbs, _Facade[UnifiedRadixCache, UnifiedTreeNode]):  # type: ignore[type-var]
    """The unified engine: ``components`` (full, swa, mamba), ``window``, ``page_size``,
    ``mamba_chunk``, ``eviction_policy``, the pools' sizes and ``mamba_per_path``."""

    def make_cache(self) -> UnifiedRadixCache:
        s = self.settings
        types = tuple(ComponentType.parse(name) for name in s.of(COMPONENTS))
        cap = s.of(MAMBA_PER_PATH)
        mamba_size = s.of(MAMBA_POOL) or default_mamba_pool(s.pool_size)
        cache = UnifiedRadixCache(components=types, page_size=s.of(PAGE), sliding_window_size=s.of(WINDOW),
                                  # the spacing matters only with states (the cache checks it anyway)
                                  mamba_cache_chunk_size=s.of(MAMBA_CHUNK) if MAMBA in types else s.of(PAGE),
                                  kv_size=s.pool_size,
                                  swa_kv_size=s.of(SWA_POOL), mamba_size=mamba_size,
                                  eviction_policy=s.of(EVICTION), mamba_max_states_per_path=-1 if cap is None else cap,
                                  device=self.pool.device, enable_kv_events=s.of(KV_EVENTS))
        # SGLang's allocators, counted (cache_counted.py), in the cache's place and the facade's
        page = s.of(PAGE)
        if cache.swa_enabled:
            cache.token_to_kv_pool_allocator = CountedSWAPages(s.pool_size, s.of(SWA_POOL) or s.pool_size, page,
                                                               cache.device)
        else:
            cache.token_to_kv_pool_allocator = CountedPages(s.pool_size, page, cache.device)
        if cache.mamba_enabled:
            cache.mamba_pool = CountedMambaPool(mamba_size, cache.device)
        self.memory: tuple[Component, ...] = tuple(DECLARED[ct] for ct in cache.tree_components)
        self.pool = KVPool(cache.token_to_kv_pool_allocator, cache.device)
        self.pool.make_room = self._make_room
        self.held: dict[int, list[Held]] = {}     # node id -> the locks taken there, newest last
        self.last_match: MatchResult | None = None
        self.last_insert: InsertedAs | None = None
        self.mamba_short = 0                         # locks that found no Mamba slot for a copy
        self._pictures: tuple[SlotPool, ...] = tuple(
            SWAPicture(cache.token_to_kv_pool_allocator) if ct == SWA else MambaPicture(cache.mamba_pool)  # type: ignore[arg-type]
            for ct in cache.tree_components[1:])
        return cache

    def _make_room(self, full_shortfall: int, swa_shortfall: int) -> None:
        """SGLang's allocator making room for an allocation (``evict_to_free_tokens``)."""
        self.cache.evict_for_alloc(EvictParams(num_tokens=full_shortfall, swa_num_tokens=swa_shortfall))

    # ------------------------------------------------------------- memory

    def extra_pools(self) -> tuple[SlotPool, ...]:
        return self._pictures

    def evict_component(self, component: Component, num_tokens: int, freed: FreedSlots | None) -> int:
        """``evict N swa`` (SWA tokens) or ``evict N mamba`` (states): that component's own
        eviction; returns how many of its slots became free."""
        amount = {"swa": "swa_num_tokens", "mamba": "mamba_num"}[component.name]
        return self._evict(component.name, EvictParams(**{amount: num_tokens}), freed)

    def evict(self, num_tokens: int, freed: FreedSlots | None = None, component: str | None = None) -> int:
        """``evict N`` (and an allocation's shortfall): room for ``num_tokens`` more tokens. With
        one pool, SGLang's ``evict`` of that many Full tokens; with the SWA pool beside it,
        what each pool lacks for them, as SGLang's allocator asks (``evict_to_free_tokens``:
        ``evict_for_alloc`` with the Full and the SWA shortfall). ``evict N swa|mamba``: that
        component alone. Returns the Full slots freed (``component``'s, when named)."""
        if component is not None and component != self.memory[0].name:
            return self.evict_component(self.component(component), num_tokens, freed)
        if not self.cache.swa_enabled or num_tokens <= 0:
            return self._evict("full", EvictParams(num_tokens=num_tokens), freed)
        pool = self.pool
        assert isinstance(pool, KVPool)
        full, swa = pool.shortfalls(num_tokens + pool.available_size())
        return self._evict("full", EvictParams(num_tokens=full, swa_num_tokens=swa), freed, for_alloc=True)

    def evict_backbone(self, num_tokens: int, release: Callable[[torch.Tensor], int]) -> None:
        self._evict("full", EvictParams(num_tokens=num_tokens), None)

    def _evict(self, name: str, params: EvictParams, freed: FreedSlots | None, for_alloc: bool = False) -> int:
        """The cache's eviction of ``params``; returns how many slots of ``name`` became free
        (nothing asked, as an allocation's shortfall below zero asks: nothing done)."""
        params = EvictParams(*(max(0, n) for n in (params.num_tokens, params.swa_num_tokens, params.mamba_num)))
        total = 0

        def heard(component: str, slots: torch.Tensor) -> None:
            nonlocal total
            if component == name:
                total += int(slots.numel())
                if freed is not None:
                    freed(slots)
        with self.listening(heard):
            if for_alloc:
                self.cache.evict_for_alloc(params)
            else:
                self.cache.evict(params)
        return total

    def listening(self, listener: Callable[[str, torch.Tensor], None]) -> _Listening:
        """A context in which every pool tells ``listener`` of the slots it takes back."""
        return _Listening(self.cache, listener)

    # --------------------------------------------------------------- verbs

    def match_key(self, key: Sequence[int], extra_key: str | None) -> Matched:
        result = self.cache.match_prefix(MatchPrefixParams(tuple(key)))
        self.last_match = result
        assert result.device_indices is not None
        return Matched(result.device_indices, self.cache.tree_core.node_by_id(result.best_match_node))

    def insert(self, key: Sequence[int], slots: torch.Tensor, priority: int | None = None,
               freed: Callable[[str, torch.Tensor], None] | None = None, extra_key: str | None = None) -> Inserted:
        """A request's end: its ``slots`` (one reference each) go to the tree as SGLang's
        ``cache_finished_req`` hands them over; the partial last page goes back to the pool.
        If the cache refuses (ValueError), every slot handed over goes back first."""
        if extra_key is not None:
            self.need("namespaces")
        whole = self.whole_pages(len(key))
        kept, tail = slots[:whole], slots[whole:]
        prev = self._tree_prefix(tuple(key[:whole]), kept)
        evicted = self._swa_evicted(kept, prev)
        state = self._mamba_slot() if self.cache.mamba_enabled else None
        params = InsertParams(key=tuple(key[:whole]), value=kept, mamba_value=state, prev_prefix_len=prev,
                              component_evicted_seqlens={SWA: evicted} if self.cache.swa_enabled else {},
                              priority=priority or 0)
        try:
            result = self.cache.insert(params)
        except (ValueError, TypeError):
            self.pool.free(slots)
            if state is not None:
                self.cache.mamba_pool.free(state)  # type: ignore[union-attr]
            raise
        if state is not None and result.mamba_exist:
            self.cache.mamba_pool.free(state)  # type: ignore[union-attr]
        if prev:
            self.pool.free(kept[:prev])   # the holder's references to the tree's own slots
        if len(tail):
            self.pool.free(tail)
            if freed is not None:
                freed("tail", tail)
        self.last_insert = InsertedAs(prev, evicted, None if state is None else int(state[0]), result.mamba_exist,
                                      result.last_device_node)
        own = kept[prev:]
        still = self.pool.mem_state[own] > 0 if own.numel() else torch.zeros(0, dtype=torch.bool)
        return Inserted(result.prefix_len, own[still], own[~still], tail)

    def insert_key(self, key: Sequence[int], slots: torch.Tensor, priority: int | None,
                   extra_key: str | None = None) -> int:
        """The cache's insert of a request's whole pages (``insert`` is the verb callers use)."""
        return self.insert(key, slots, priority, extra_key=extra_key).prefix_len

    def _tree_prefix(self, key: tuple, slots: torch.Tensor) -> int:
        """How many leading ``slots`` are the tree's own along ``key`` (what the request
        matched and read in place: SGLang's ``prev_prefix_len``), in whole pages."""
        node, at, done = self.cache.root_node, 0, 0
        page = self.page_size
        while at < len(key):
            child = node.children.get(self.cache.child_key(key, at))
            if child is None:
                break
            value = child.full_value()
            n = min(len(child.key), len(key) - at)
            same = (value[:n] == slots[at:at + n]).tolist()
            run = same.index(False) if False in same else n
            done = at + run
            if run < len(child.key):
                break
            node, at = child, at + n
        return done - done % page

    def _swa_evicted(self, slots: torch.Tensor, prev: int) -> int:
        """Where the request's own SWA KV still starts: its slots past ``prev`` whose SWA
        peer it gave up already (it read past its window), in whole pages."""
        alloc = self.cache.token_to_kv_pool_allocator
        if not isinstance(alloc, CountedSWAPages) or prev >= len(slots):
            return 0
        gone = (alloc.translate_loc_from_full_to_swa(slots[prev:]) == 0).tolist()
        run = gone.index(False) if False in gone else len(gone)
        run -= run % self.page_size
        return prev + run if run else 0

    def _mamba_slot(self) -> torch.Tensor | None:
        pool = self.cache.mamba_pool
        assert pool is not None
        slot = pool.alloc(1)
        if slot is None:
            self.cache.evict_for_alloc(EvictParams(mamba_num=1))
            slot = pool.alloc(1)
        return slot

    def lock(self, node: UnifiedTreeNode) -> int:
        before = self.cache.evictable_size()
        receipt = self.cache.inc_lock_ref(node.id).to_dec_params()
        slot = None
        if self.cache.mamba_enabled:
            slot = self._mamba_slot()
            if slot is None:
                self.mamba_short += 1
            else:
                self._copy_state(node, slot)
        self.held.setdefault(node.id, []).append(Held(receipt, slot))
        return self.cache.evictable_size() - before

    def _copy_state(self, node: UnifiedTreeNode, slot: torch.Tensor) -> None:
        """The holder's own Mamba slot gets a copy of the state at ``node`` (SGLang's
        copy-on-write at the end of a match), if the node keeps one."""
        mamba = self.cache.tree_core.components_by_type[MAMBA]
        result = MatchResult(0, node.id, node.id)
        self.cache.tracer.op = "inc_lock_ref"
        mamba.finalize_match_result_in_cache(MatchPrefixParams((), cow_mamba=True, req=Req(slot[0])), result)

    def unlock(self, node: UnifiedTreeNode) -> int:
        taken = self.held.get(node.id)
        if not taken:
            raise ValueError(f"no lock on node #{node.id} to release")
        before = self.cache.evictable_size()
        self.cache.dec_lock_ref(node.id, taken[-1].receipt)  # type: ignore[arg-type]
        held = taken.pop()
        if not taken:
            del self.held[node.id]
        if held.mamba_slot is not None:
            self.cache.mamba_pool.free(held.mamba_slot)  # type: ignore[union-attr]
        return self.cache.evictable_size() - before

    def reset(self, pool: TokenToKVPool | None = None) -> None:
        """Empty the tree and every pool (the facade's pool stays this engine's own)."""
        self.cache.reset()
        self.held.clear()
        self.last_match = self.last_insert = None

    def preview(self, key: Sequence[int], extra_key: str | None = None) -> MatchPreview:
        return preview_match(self.cache.snapshot(), key)

    def check_invariants(self, held: Sequence[torch.Tensor | Sequence[int]] = ()) -> None:
        check_facade_pools(self, held)

    def protected_size(self) -> int:
        return self.cache.protected_size()

    def take_events(self) -> list[KVEvent]:
        """The KV events since the last call (cache_events.py: Full KV pages only, as v0.5.23)."""
        return self.cache.tree_core.event_recorder.take()

    def total_size(self) -> int:
        return self.cache.total_size()[0]

    def change(self, option: str, value: object) -> None:
        if option != EVICTION.name:
            super().change(option, value)
        self.settings = self.settings.replace(eviction_policy=value)
        tree = self.cache.tree_core
        tree.eviction_policy = self.settings.of(EVICTION)
        tree.eviction_strategy = eviction_key(tree.eviction_policy)


class _Listening:
    """``with engine.listening(f):`` routes every pool's frees to ``f``, then stops."""

    def __init__(self, cache: UnifiedRadixCache, listener: Callable[[str, torch.Tensor], None]) -> None:
        alloc = cache.token_to_kv_pool_allocator
        self.pools = [p for p in (alloc, getattr(alloc, "full_attn_allocator", None), cache.mamba_pool)
                      if p is not None]
        self.listener = listener

    def __enter__(self) -> None:
        for pool in self.pools:
            pool.listener = self.listener  # type: ignore[union-attr]

    def __exit__(self, *exc: object) -> None:
        for pool in self.pools:
            pool.listener = None  # type: ignore[union-attr]
