"""An adapter that lets SGLang's unit tests of the unified tree (upstream 06ad7b2b0,
``test/registered/unit/mem_cache/test_unified_radix_cache_unittest.py``) drive radixviz's engine.

The tests speak 06ad7b2b0's API; the engine speaks v0.5.23's. What moved between the two, and
how this file bridges it:

- a lock: 06ad7b2b0 released it with ``DecLockRefParams(swa_uuid_for_lock=...)``; v0.5.23 wants
  the receipt ``inc_lock_ref`` returned (anchor node, each component's boundary). The adapter
  keeps each receipt it hands out and replays the one a release names (by node, and by its SWA
  boundary when one is given), with ``skip_swa`` once the SWA part went early, as
  v0.5.23's ``unlock`` does;
- ``dec_swa_lock_only(node, uuid)`` became ``dec_swa_lock_only(node, receipt)``;
- a match result lost ``device_indices`` (the engine still reports them) and the host fields;
- ``InsertParams(swa_evicted_seqlen=n)`` became ``component_evicted_seqlens[SWA] = n``;
- the tree core's internals the tests reach into gained ``cache_actions`` and lost nothing the
  device tier uses: ``host_frees`` and ``target`` are accepted and ignored.
Requests: ``make_req`` gives a request its own Mamba slot, as 06ad7b2b0's ``HybridReqToTokenPool``
did on ``alloc``.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import torch

from radixviz.engines.unified.cache import UnifiedRadixCache
from radixviz.engines.unified.cache_params import (EvictParams as EngineEvictParams, InsertParams as EngineInsertParams,
                                                   MatchPrefixParams as EngineMatchParams, Req)
from radixviz.engines.unified.node import ComponentType, UnifiedTreeNode

FLA_CHUNK_SIZE = 64  # the chunk 06ad7b2b0's fixture gives a dummy model's Mamba layers


@dataclasses.dataclass(frozen=True)
class CacheConfig:
    page_size: int = 1
    components: tuple = (ComponentType.FULL,)
    sliding_window_size: int | None = None
    enable_mamba_extra_buffer: bool = False
    mamba_cache_size: int = 20
    kv_size: int = 256
    eviction_policy: str = "lru"

    @property
    def has_mamba(self) -> bool:
        return ComponentType.MAMBA in self.components

    @property
    def has_swa(self) -> bool:
        return ComponentType.SWA in self.components

    @property
    def label(self) -> str:
        parts = ["_".join(c.name for c in self.components), f"ps{self.page_size}"]
        if self.sliding_window_size is not None:
            parts.append(f"sw{self.sliding_window_size}")
        return "_".join(parts)


# 06ad7b2b0's _CONFIGS: the suite runs once per config
CONFIGS = [
    CacheConfig(page_size=1), CacheConfig(page_size=4), CacheConfig(page_size=16),
    CacheConfig(page_size=64, kv_size=1024), CacheConfig(page_size=128, kv_size=2048),
    CacheConfig(page_size=1, components=(ComponentType.FULL, ComponentType.MAMBA)),
    CacheConfig(page_size=4, components=(ComponentType.FULL, ComponentType.MAMBA), enable_mamba_extra_buffer=True,
                mamba_cache_size=60),
    CacheConfig(page_size=64, components=(ComponentType.FULL, ComponentType.MAMBA), enable_mamba_extra_buffer=True,
                mamba_cache_size=60, kv_size=1024),
    CacheConfig(page_size=128, components=(ComponentType.FULL, ComponentType.MAMBA), enable_mamba_extra_buffer=True,
                mamba_cache_size=60, kv_size=2048),
    CacheConfig(page_size=1, components=(ComponentType.FULL, ComponentType.SWA), sliding_window_size=4),
    CacheConfig(page_size=4, components=(ComponentType.FULL, ComponentType.SWA), sliding_window_size=4),
    CacheConfig(page_size=4, components=(ComponentType.FULL, ComponentType.SWA), sliding_window_size=2),
    CacheConfig(page_size=16, components=(ComponentType.FULL, ComponentType.SWA), sliding_window_size=16, kv_size=512),
    CacheConfig(page_size=64, components=(ComponentType.FULL, ComponentType.SWA), sliding_window_size=64, kv_size=4096),
    CacheConfig(page_size=128, components=(ComponentType.FULL, ComponentType.SWA), sliding_window_size=128,
                kv_size=8192),
    CacheConfig(page_size=128, components=(ComponentType.FULL, ComponentType.SWA), sliding_window_size=4,
                kv_size=8192),
    CacheConfig(page_size=1, components=(ComponentType.FULL, ComponentType.SWA), sliding_window_size=128, kv_size=1024),
    CacheConfig(page_size=1, components=(ComponentType.FULL, ComponentType.SWA, ComponentType.MAMBA),
                sliding_window_size=128, kv_size=1024),
    CacheConfig(page_size=64, components=(ComponentType.FULL, ComponentType.SWA, ComponentType.MAMBA),
                sliding_window_size=64, enable_mamba_extra_buffer=True, mamba_cache_size=60, kv_size=4096),
]


def RadixKey(tokens) -> tuple:  # noqa: N802  (the tests' name for a key)
    return tuple(tokens)


@dataclasses.dataclass
class InsertParams:
    key: tuple
    value: torch.Tensor | None = None
    priority: int = 0
    prev_prefix_len: int = 0
    swa_evicted_seqlen: int = 0
    mamba_value: torch.Tensor | None = None

    def for_engine(self) -> EngineInsertParams:
        params = EngineInsertParams(key=self.key, value=self.value, mamba_value=self.mamba_value,
                                    prev_prefix_len=self.prev_prefix_len, priority=self.priority)
        if self.swa_evicted_seqlen:
            params.set_evicted_seqlen(ComponentType.SWA, self.swa_evicted_seqlen)
        return params


@dataclasses.dataclass
class MatchPrefixParams:
    key: tuple
    cow_mamba: bool = False
    req: Any = None


@dataclasses.dataclass
class DecLockRefParams:
    swa_uuid_for_lock: int | None = None


@dataclasses.dataclass
class EvictParams:
    num_tokens: int = 0
    swa_num_tokens: int = 0
    mamba_num: int = 0


class Matched:
    """A match result as 06ad7b2b0 returned it."""

    def __init__(self, result) -> None:
        self.result = result
        self.device_indices = result.device_indices
        self.last_device_node = self.last_host_node = result.last_device_node
        self.best_match_node = result.best_match_node
        self.host_hit_length = self.swa_host_hit_length = self.mamba_host_hit_length = 0
        self.full_kv_hit_length = result.full_kv_hit_length
        self.mamba_branching_seqlen = result.mamba_branching_seqlen


class Receipt:
    """What 06ad7b2b0's ``inc_lock_ref`` returned, holding v0.5.23's receipt."""

    def __init__(self, node_id: int, receipt) -> None:
        self.node_id, self.receipt, self.swa_released = node_id, receipt, False
        self.swa_uuid_for_lock = receipt.component_lock_uuids.get(ComponentType.SWA)

    def to_dec_params(self) -> DecLockRefParams:
        return DecLockRefParams(self.swa_uuid_for_lock)


class TreeCore:
    """The tree core, with the signatures of the internals the tests reach into."""

    def __init__(self, core) -> None:
        self._core = core

    def __getattr__(self, name: str):
        return getattr(self._core, name)

    def _evict_component_and_detach_lru(self, node, component, tracker=None, device_frees=None,
                                        host_frees=None, target=None):
        return self._core._evict_component_and_detach_lru(node, component, device_frees, [], tracker)

    def _cascade_evict(self, node, trigger, tracker, device_frees=None, host_frees=None):
        return self._core._cascade_evict(node, trigger, tracker, {} if device_frees is None else device_frees, [])

    def _iteratively_delete_tombstone_leaf(self, deleted, tracker, device_frees, host_frees):
        return self._core._iteratively_delete_tombstone_ancestors(deleted.parent, tracker, device_frees, [])


class Cache:
    """06ad7b2b0's UnifiedRadixCache calls, answered by radixviz's engine (v0.5.23)."""

    def __init__(self, engine: UnifiedRadixCache) -> None:
        self.engine = engine
        self.tree_core = TreeCore(engine.tree_core)
        self.components = engine.tree_core.components_by_type
        self._receipts: list[Receipt] = []

    def __getattr__(self, name: str):
        return getattr(self.engine, name)

    def match_prefix(self, params: MatchPrefixParams) -> Matched:
        return Matched(self.engine.match_prefix(EngineMatchParams(params.key, params.cow_mamba, params.req)))

    def insert(self, params: InsertParams):
        return self.engine.insert(params.for_engine())

    def evict(self, params: EvictParams):
        return self.engine.evict(EngineEvictParams(params.num_tokens, params.swa_num_tokens, params.mamba_num))

    def inc_lock_ref(self, node_id: int) -> Receipt:
        receipt = Receipt(node_id, self.engine.inc_lock_ref(node_id))
        self._receipts.append(receipt)
        return receipt

    def _take(self, node_id: int, uuid: int | None) -> Receipt:
        for receipt in reversed(self._receipts):
            if receipt.node_id == node_id and (uuid is None or receipt.swa_uuid_for_lock == uuid):
                return receipt
        raise AssertionError(f"no lock taken on node {node_id}")

    def dec_lock_ref(self, node_id: int, params: DecLockRefParams, skip_swa: bool = False) -> None:
        receipt = self._take(node_id, params.swa_uuid_for_lock)
        self._receipts.remove(receipt)
        self.engine.dec_lock_ref(node_id, receipt.receipt.to_dec_params(), skip_swa=skip_swa or receipt.swa_released)

    def dec_swa_lock_only(self, node_id: int, uuid: int | None = None) -> None:
        receipt = self._take(node_id, uuid)
        step = self.engine.tree_core.dec_swa_lock_only(node_id, receipt.receipt.to_dec_params())
        self.engine._apply_eviction_result(step)
        receipt.swa_released = True


def build_fixture(cfg: CacheConfig, tree_page_size: int | None = None, mamba_cache_chunk_size: int | None = None):
    """(cache, allocator, requests) as 06ad7b2b0's fixture builds them, on radixviz's engine."""
    page = cfg.page_size if tree_page_size is None else tree_page_size
    chunk = max(FLA_CHUNK_SIZE, cfg.page_size) if mamba_cache_chunk_size is None else mamba_cache_chunk_size
    engine = UnifiedRadixCache(components=cfg.components, page_size=page, sliding_window_size=cfg.sliding_window_size,
                               mamba_cache_chunk_size=chunk, kv_size=cfg.kv_size, mamba_size=cfg.mamba_cache_size,
                               eviction_policy=cfg.eviction_policy)
    return Cache(engine), engine.token_to_kv_pool_allocator, engine


def make_req(engine: UnifiedRadixCache) -> Req:
    req = Req()
    if engine.mamba_pool is not None:
        slot = engine.mamba_pool.alloc(1)
        assert slot is not None, "the Mamba pool is full"
        req.mamba_pool_idx = slot[0]
    return req


def new_node(node_id: int) -> UnifiedTreeNode:
    return UnifiedTreeNode(node_id, 0, 0)
