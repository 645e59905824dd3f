"""What radixviz adds around the unified cache, outside SGLang's algorithm: building it from
checked options, refusing a bad call before anything changes, pictures of the tree and an
observer for its steps. ``UnifiedRadixCache`` (cache.py) inherits these, so cache.py keeps to
SGLang's functions.
"""
from __future__ import annotations

import math
from typing import cast

import torch

from ...cache.keys import as_key, get_child_key
from .cache_component import CacheView
from .cache_events import KVCacheEventRecorder
from .cache_full import FullComponent
from .cache_kinds import WingTracer
from .cache_mamba import MambaComponent
from .cache_params import DecLockRefParams, EvictParams, InsertParams
from .cache_pools import MambaPool, SWATokenToKVPoolAllocator, TokenToKVPoolAllocator
from .cache_swa import SWAComponent
from .cache_tree import UnifiedTreeCore
from .invariants import check_unified_invariants
from .node import BASE_COMPONENT_TYPE, ComponentType, UnifiedTreeNode
from .snapshot import ComponentSizes, UnifiedTreeSnapshot, snapshot_unified_node

# v0.5.23's default state spacing: FLA's chunk, unless the model names another
DEFAULT_MAMBA_CHUNK = 64


def _whole(name: str, n: object, low: int = 1) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < low:
        raise ValueError(f"{name} must be a whole number >= {low}, not {n!r}")
    return n


def parse_components(components: object) -> tuple:
    """``"full,swa"``, ``("full", "mamba")`` or ComponentTypes -> the ComponentTypes in SGLang's
    order (Full, SWA, Mamba); Full must be one of them."""
    if isinstance(components, str):
        components = [part for part in components.split(",") if part.strip()]
    names = [c if isinstance(c, ComponentType) else ComponentType.parse(str(c)) for c in components]  # type: ignore[attr-defined]
    if len(set(names)) != len(names):
        raise ValueError("a component is named twice")
    if ComponentType.FULL not in names:
        raise ValueError("the full component is the tree's backbone: it must be one of the components")
    return tuple(sorted(names))


class CacheChecks:
    def __init__(self, components: object = ("full",), page_size: int = 1,
                 sliding_window_size: int | None = None, mamba_cache_chunk_size: int = DEFAULT_MAMBA_CHUNK,
                 kv_size: int = 256, swa_kv_size: int | None = None, mamba_size: int = 32,
                 eviction_policy: str = "lru", mamba_max_states_per_path: int = -1,
                 device: str | torch.device = "cpu", enable_kv_events: bool = False) -> None:
        self.tree_components = parse_components(components)
        self.page_size = _whole("page_size", page_size)
        self.swa_enabled = ComponentType.SWA in self.tree_components
        self.mamba_enabled = ComponentType.MAMBA in self.tree_components
        self.sliding_window_size = _whole("the window", sliding_window_size) if self.swa_enabled else None
        chunk = _whole("the Mamba state spacing", mamba_cache_chunk_size)
        if max(chunk, page_size) % min(chunk, page_size):
            raise ValueError(f"the Mamba state spacing ({chunk}) and the page size ({page_size}) "
                             f"must divide one another")
        self.mamba_cache_chunk_size = chunk if self.mamba_enabled else None
        if mamba_max_states_per_path != -1:
            _whole("the Mamba states kept per path (-1: no limit)", mamba_max_states_per_path)
        self.device = torch.device(device)
        _whole("kv_size", kv_size, low=page_size)
        self.token_to_kv_pool_allocator: TokenToKVPoolAllocator | SWATokenToKVPoolAllocator
        if self.swa_enabled:
            swa_size = _whole("swa_kv_size", kv_size if swa_kv_size is None else swa_kv_size, low=page_size)
            self.token_to_kv_pool_allocator = SWATokenToKVPoolAllocator(kv_size, swa_size, page_size, self.device)
        else:
            self.token_to_kv_pool_allocator = TokenToKVPoolAllocator(kv_size, page_size, self.device)
        self.mamba_pool = MambaPool(_whole("mamba_size", mamba_size), self.device) if self.mamba_enabled else None
        built: dict = {}
        # the components get the whole cache (UnifiedRadixCache, which has the lock calls)
        owner = cast(CacheView, self)
        for ct in self.tree_components:
            if ct == ComponentType.FULL:
                built[ct] = FullComponent(owner)
            elif ct == ComponentType.SWA:
                built[ct] = SWAComponent(owner, self.sliding_window_size)  # type: ignore[arg-type]
            else:
                built[ct] = MambaComponent(owner, chunk, page_size, mamba_max_states_per_path)
        self.tracer = WingTracer("radixviz.engines.unified.cache", self.snapshot)
        self.tree_core = UnifiedTreeCore(built, page_size, eviction_policy, self.tracer, self.device,
                                         KVCacheEventRecorder(bool(enable_kv_events), page_size))
        self.tree_core.event_recorder.record_all_cleared()   # the constructor's reset, as SGLang's
        self._lru_orders: dict = {}

    def reset(self) -> None:
        """Empty the tree and every pool."""
        self.tree_core.reset()
        self.token_to_kv_pool_allocator.clear()
        if self.mamba_pool is not None:
            self.mamba_pool.clear()
        self.tree_core.event_recorder.record_all_cleared()

    # ---- refusing bad calls before anything changes

    def _key(self, key: object) -> tuple:
        try:
            out = as_key(key)  # type: ignore[arg-type]
            hash(out)
        except TypeError as error:
            raise ValueError(f"a key is a str, list or tuple of hashable tokens ({error})") from None
        return out

    def _node(self, node_id: object) -> UnifiedTreeNode:
        if isinstance(node_id, UnifiedTreeNode):
            node_id = node_id.id
        try:
            return self.tree_core.node_by_id(node_id)  # type: ignore[arg-type]
        except (KeyError, TypeError):
            raise ValueError(f"node {node_id!r} is not in the tree (evicted, or never made)") from None

    def _slots(self, name: str, value: object, limit: int) -> torch.Tensor:
        if not isinstance(value, torch.Tensor):
            try:
                value = torch.tensor(list(value), dtype=torch.int64)  # type: ignore[call-overload]
            except (TypeError, ValueError, RuntimeError):
                raise ValueError(f"{name} must be a 1-D tensor of slot numbers") from None
        if value.dim() != 1 or value.is_floating_point():
            raise ValueError(f"{name} must be a 1-D tensor of slot numbers")
        value = value.to(device=self.device, dtype=torch.int64)
        if value.numel() and (int(value.min()) < 1 or int(value.max()) > limit):
            raise ValueError(f"{name} holds a slot outside the pool (1..{limit})")
        return value

    def _check_insert(self, params: InsertParams) -> None:
        if not isinstance(params, InsertParams):
            raise ValueError("insert takes InsertParams")
        params.key = self._key(params.key)
        aligned = len(params.key) // self.page_size * self.page_size
        if params.value is None:
            raise ValueError("insert needs the request's KV slots (value)")
        alloc = self.token_to_kv_pool_allocator
        full = alloc.full_attn_allocator if isinstance(alloc, SWATokenToKVPoolAllocator) else alloc
        params.value = self._slots("value", params.value, (full.num_pages + 1) * self.page_size - 1)
        if params.value.numel() < aligned:
            raise ValueError(f"{aligned} tokens to insert but only {params.value.numel()} slots")
        if self.mamba_pool is not None:
            if params.mamba_value is None:
                raise ValueError("with the mamba component an insert hands over a state (mamba_value)")
            params.mamba_value = self._slots("mamba_value", params.mamba_value, self.mamba_pool.size)
            if params.mamba_value.numel() != 1:
                raise ValueError("mamba_value is one state slot")
        for name in ("prev_prefix_len", "inserted_len"):
            _whole(name, getattr(params, name), low=0)
        if isinstance(params.priority, bool) or not isinstance(params.priority, int):
            raise ValueError(f"priority must be a whole number, not {params.priority!r}")
        for ct, n in params.component_evicted_seqlens.items():
            _whole(f"the {ct} evicted length", n, low=0)
            if n % self.page_size:
                raise ValueError(f"the {ct} evicted length must be whole pages of {self.page_size}")

    def _check_evict(self, params: EvictParams) -> None:
        for name in ("num_tokens", "swa_num_tokens", "mamba_num"):
            _whole(name, getattr(params, name), low=0)

    def _check_release(self, node: UnifiedTreeNode, params: DecLockRefParams, skip_swa: bool = False,
                       swa_only: bool = False) -> None:
        """Would releasing ``params`` at ``node`` find every lock it names? (SGLang asserts on
        the way, part done; here nothing changes on a refusal.)"""
        tree = self.tree_core
        if not isinstance(params, DecLockRefParams) or params.node_id != node.id:
            raise ValueError(f"this receipt is not for node #{node.id}")
        skipped = set(params.skipped_lock_components)
        wanted = [ct for ct in self.tree_components if ct not in skipped]
        if swa_only or skip_swa:
            keep = (lambda ct: ct != BASE_COMPONENT_TYPE) if swa_only else (lambda ct: ct == BASE_COMPONENT_TYPE)
            wanted = [ct for ct in wanted if keep(ct)]
        if ComponentType.SWA in wanted and ComponentType.SWA not in params.component_lock_uuids:
            raise ValueError("the receipt has no SWA boundary")
        for ct in wanted:
            for cur in self._release_walk(node, ct, params):
                if cur.component_data[ct].lock_ref <= 0:
                    raise ValueError(f"node #{cur.id} holds no {ct} lock for this receipt to release")
        if BASE_COMPONENT_TYPE in wanted and node is not tree.root_node:
            below = sum(c.component_data[BASE_COMPONENT_TYPE].lock_ref for c in node.children.values())
            if node.component_data[BASE_COMPONENT_TYPE].lock_ref <= below:
                raise ValueError(f"node #{node.id} holds no Full lock of its own to release")

    def _release_walk(self, node: UnifiedTreeNode, ct: ComponentType, params: DecLockRefParams) -> list:
        root = self.tree_core.root_node
        if node is root:
            return []
        if ct == ComponentType.MAMBA:
            return [node]
        out, cur = [], node
        boundary = params.component_lock_uuids.get(ct) if ct == ComponentType.SWA else None
        while cur is not root:
            out.append(cur)
            if boundary and cur.component_data[ct].uuid == boundary:
                break
            cur = cur.parent
        return out

    # ---- pictures

    def snapshot(self) -> UnifiedTreeSnapshot:
        """An immutable picture of the whole tree and each component's sizes as they are now."""
        tree = self.tree_core
        sizes = []
        for ct in self.tree_components:
            lru = tree.lru_lists[ct]
            cached = self._lru_orders.get(ct)
            if cached is None or cached[0] is not lru or cached[1] != lru.version:
                cached = (lru, lru.version, lru.order() if ct != BASE_COMPONENT_TYPE else ())
                self._lru_orders[ct] = cached
            sizes.append(ComponentSizes(tree.component_evictable_size(ct), tree.component_protected_size(ct), cached[2]))
        return UnifiedTreeSnapshot(
            snapshot_unified_node(tree.root_node, self.tree_components), tree.evictable_size(), tree._clock,
            component_types=self.tree_components, sizes=tuple(sizes), page_size=self.page_size,
            sliding_window_size=self.sliding_window_size, mamba_cache_chunk_size=self.mamba_cache_chunk_size,
            eviction_policy=tree.eviction_policy)

    def sanity_check(self) -> None:
        """Raise InvariantError on the first broken invariant of the tree or its pools."""
        check_unified_invariants(self)

    def available_and_evictable_str(self) -> str:
        alloc, tree = self.token_to_kv_pool_allocator, self.tree_core
        full_available = alloc.full_available_size()
        lines = [f"Available full tokens: {full_available + tree.evictable_size()} "
                 f"(full_available_size={full_available} + full_evictable_size_={tree.evictable_size()})"]
        for ct in self.tree_components:
            if ct == BASE_COMPONENT_TYPE:
                continue
            available = (alloc.swa_available_size() if ct == ComponentType.SWA  # type: ignore[union-attr]
                         else self.mamba_pool.available_size())  # type: ignore[union-attr]
            evictable = tree.component_evictable_size(ct)
            lines.append(f"Available {ct}: {available + evictable} "
                         f"(available_size={available} + component_evictable_size_={evictable})")
        return "\n".join(lines) + "\n"

    def pretty_print(self) -> str:
        """The tree as SGLang prints it: one line a node, each component present or not."""
        lines, stack = [], [(self.tree_core.root_node, 0)]
        while stack:
            node, indent = stack.pop()
            held = " ".join(f"{ct}={'yes' if node.component_data[ct].value is not None else 'no'}"
                            for ct in self.tree_components)
            lines.append(f"{' ' * indent} [{node.id}] {len(node.key)} "
                         f"full_lock={node.component_data[BASE_COMPONENT_TYPE].lock_ref} {held}")
            stack.extend((child, indent + 2) for child in node.children.values())
        return "\n".join(lines)

    def child_key(self, key: tuple, start: int = 0):
        return get_child_key(key, self.page_size, start)

    @property
    def mamba_checkpoint_grid(self) -> int | None:
        return None if self.mamba_cache_chunk_size is None else math.lcm(self.mamba_cache_chunk_size, self.page_size)
