"""``TreeComponent``: what one kind of memory brings to the unified tree (v0.5.23's
``unified_cache/components/base.py``).

The tree knows keys and nodes, nothing of memory. Each component keeps its own data on the
nodes and answers a handful of hooks: may a match end on this node (its validator), what a
split does to its data, what an insert over an existing node or a new leaf does, which node
it evicts next and how, how far a lock reaches. Full, SWA and Mamba (cache_full.py,
cache_swa.py, cache_mamba.py) answer them differently; the tree calls them all the same way.
Left out with the host tier: host values and locks, transfers, and session coverage.

The two seams are written here too: ``TreeView``, the tree as its components (and its own
insert and eviction halves) see it, and ``CacheView``, what a component asks of its cache.
"""
from __future__ import annotations

import abc
import enum
from typing import TYPE_CHECKING, Protocol

from .cache_kinds import WingBranch
from .node import ComponentType

if TYPE_CHECKING:
    from collections.abc import Callable

    import torch

    from .cache_kinds import WingTracer
    from .cache_lru import UnifiedLRUList
    from .cache_params import (DecLockRefParams, EvictParams, EvictResult, IncLockRefResult, InsertParams,
                               InsertResult, MatchPrefixParams, MatchResult)
    from .cache_pools import MambaPool
    from .node import UnifiedTreeNode


class CacheView(Protocol):
    """What a component asks of the cache that owns it (the Mamba copy-on-write)."""

    mamba_pool: MambaPool | None

    def inc_lock_ref(self, node_id: int, skip_lock_components: tuple = ()) -> IncLockRefResult: ...

    def dec_lock_ref(self, node_id: int, params: DecLockRefParams, skip_swa: bool = False) -> None: ...

    def evict_for_alloc(self, params: EvictParams) -> EvictResult: ...


class TreeView(abc.ABC):
    """The unified tree as its components, and its insert and eviction halves, use it
    (cache_tree.py builds the whole: UnifiedTreeCore)."""

    page_size: int
    device: torch.device
    root_node: UnifiedTreeNode
    component_types: tuple
    components: tuple[TreeComponent, ...]
    components_by_type: dict[ComponentType, TreeComponent]
    lru_lists: dict[ComponentType, UnifiedLRUList]
    component_evictable_size_: dict[ComponentType, int]
    component_protected_size_: dict[ComponentType, int]
    evictable_device_leaves: set[UnifiedTreeNode]
    eviction_strategy: Callable
    eviction_policy: str
    _node_arena: dict[int, UnifiedTreeNode]
    tr: WingBranch

    @abc.abstractmethod
    def tick(self) -> int: ...

    @abc.abstractmethod
    def next_component_uuid(self) -> int: ...

    @abc.abstractmethod
    def node_by_id(self, node_id: int) -> UnifiedTreeNode: ...

    @abc.abstractmethod
    def child_key(self, key: tuple, start: int = 0) -> object: ...

    @abc.abstractmethod
    def key_match(self, edge: tuple, key: tuple, start: int = 0) -> int: ...

    @abc.abstractmethod
    def _split_node(self, key: tuple, child: UnifiedTreeNode, split_len: int) -> UnifiedTreeNode: ...

    @abc.abstractmethod
    def _add_new_node(self, parent: UnifiedTreeNode, key: tuple, value: torch.Tensor,
                      priority: int = 0) -> UnifiedTreeNode: ...

    @abc.abstractmethod
    def _touch_node(self, node: UnifiedTreeNode) -> None: ...

    @abc.abstractmethod
    def set_component_device_value(self, node_id: int, component_type: ComponentType, value: torch.Tensor) -> None: ...

    @abc.abstractmethod
    def _is_device_leaf(self, node: UnifiedTreeNode) -> bool: ...

    @abc.abstractmethod
    def _update_evictable_leaf_sets(self, node: UnifiedTreeNode) -> None: ...

    @abc.abstractmethod
    def _evict_component_and_detach_lru(self, node: UnifiedTreeNode, component: TreeComponent,
                                        device_frees: dict, cache_actions: list, tracker: dict | None = None) -> int: ...

    @abc.abstractmethod
    def _cascade_evict(self, node: UnifiedTreeNode, trigger: TreeComponent, tracker: dict,
                       device_frees: dict, cache_actions: list) -> None: ...


class LRURefreshPhase(str, enum.Enum):
    WALKDOWN = "walkdown"      # an insert's walk stepped onto a node
    MATCH_END = "match_end"    # a match settled on its node
    INSERT_END = "insert_end"  # an insert committed its node


class Validator(abc.ABC):
    """A match's stateful predicate: may the match end on this node? One is made per match;
    ``reason`` says, in a few words, why the last node was refused."""

    reason = ""

    @abc.abstractmethod
    def __call__(self, node: UnifiedTreeNode) -> bool: ...


class DataValidator(Validator):
    """Accepts a node that holds the component's data (Full: its KV; Mamba: a state)."""

    def __init__(self, component_type: ComponentType, reason: str) -> None:
        self.component_type, self.refusal = component_type, reason

    def __call__(self, node: UnifiedTreeNode) -> bool:
        if node.component_data[self.component_type].value is not None:
            return True
        self.reason = self.refusal
        return False


class TreeComponent(abc.ABC):
    component_type: ComponentType  # set by each subclass, as a class attribute

    def __init__(self, cache: CacheView) -> None:
        self.cache = cache
        self.tree_core: TreeView = None  # type: ignore[assignment]  # set by the tree
        self.is_evict_device_ongoing = False
        self.tr: WingBranch = None  # type: ignore[assignment]              # set by the tree

    def attach_tracer(self, tracer: WingTracer) -> None:
        """Report this component's steps through ``tracer``, as written in its own file."""
        self.tr = WingBranch(tracer, type(self).__module__)

    # ---- data on a node

    def node_has_component_data(self, node: UnifiedTreeNode) -> bool:
        return node.component_data[self.component_type].value is not None

    def value_len(self, node: UnifiedTreeNode) -> int:
        value = node.component_data[self.component_type].value
        return len(value) if value is not None else 0

    def reclaimable_value_len(self, node: UnifiedTreeNode) -> int:
        """What the pool gets back when this node's data is evicted: the sizes count this."""
        return self.value_len(node)

    def refresh_lru(self, phase: LRURefreshPhase, node: UnifiedTreeNode, root_node: UnifiedTreeNode) -> None:
        """Keep this component's LRU list in step with a use of ``node`` (SWA and Mamba refine it)."""
        return None

    # ---- match

    @abc.abstractmethod
    def create_match_validator(self) -> Validator: ...

    def finalize_match_result_in_tree_core(self, result: MatchResult, value_chunks: list,
                                           best_value_len: int) -> MatchResult:
        return result

    def finalize_match_result_in_cache(self, params: MatchPrefixParams, result: MatchResult) -> MatchResult:
        return result

    # ---- insert

    def update_component_on_insert_overlap(self, node: UnifiedTreeNode, prefix_len: int,
                                           total_prefix_len: int, value_slice: torch.Tensor,
                                           params: InsertParams, result: InsertResult,
                                           cache_actions: list) -> int:
        """Called for each existing node an insert walks over. Returns where, in
        ``value_slice``, this component took the request's slots for its own; the tree frees
        the request's other copies of the tree's slots (``prefix_len``: it took none)."""
        return prefix_len

    def commit_insert_component_data(self, node: UnifiedTreeNode, is_new_leaf: bool,
                                     params: InsertParams, result: InsertResult, cache_actions: list) -> None:
        """Give the insert's last node this component's data (once per insert)."""
        return None

    # ---- split

    @abc.abstractmethod
    def redistribute_on_node_split(self, new_parent: UnifiedTreeNode, child: UnifiedTreeNode) -> None:
        """Share this component's data out between the new parent (the first part of the
        edge) and the child (the rest), after the tree cut the keys."""

    # ---- eviction

    @abc.abstractmethod
    def evict_component(self, node: UnifiedTreeNode, device_frees: dict, cache_actions: list) -> int:
        """Collect this component's slots on ``node`` for freeing and make it a tombstone;
        return the count freed. (Full keeps its value until the cascade is done: the SWA free
        still reads it.)"""

    def eviction_priority(self, is_leaf: bool) -> int:
        """Higher goes later. Evicting a component evicts every other one of equal or lower
        priority on the node. On a leaf all are 0 (the node goes); inside: Full 2, SWA 1,
        Mamba 0."""
        return 0

    def evict_device_start(self, request_cnt: int) -> None:
        assert not self.is_evict_device_ongoing, f"{self.component_type} eviction already running"
        self._evict_device_start(request_cnt)
        self.is_evict_device_ongoing = True

    def evict_device_next_node(self, tracker: dict, device_frees: dict, cache_actions: list) -> int | None:
        """One step of this component's eviction: a leaf for the cache to delete (its id), or
        None after at most one tombstone (or when done)."""
        assert self.is_evict_device_ongoing, f"{self.component_type} eviction not started"
        return self._evict_device_next_node(tracker, device_frees, cache_actions)

    def evict_device_end(self) -> None:
        assert self.is_evict_device_ongoing, f"{self.component_type} eviction not started"
        self._evict_device_end()
        self.is_evict_device_ongoing = False

    @abc.abstractmethod
    def _evict_device_start(self, request_cnt: int) -> None: ...

    @abc.abstractmethod
    def _evict_device_next_node(self, tracker: dict, device_frees: dict, cache_actions: list) -> int | None: ...

    @abc.abstractmethod
    def _evict_device_end(self) -> None: ...

    # ---- locks

    @abc.abstractmethod
    def acquire_component_lock(self, node: UnifiedTreeNode, result: IncLockRefResult) -> IncLockRefResult:
        """Lock this component's data from ``node`` up as far as it needs (Full: to the root;
        SWA: a window; Mamba: the node); move locked tokens from evictable to protected."""

    @abc.abstractmethod
    def release_component_lock(self, node: UnifiedTreeNode, params: DecLockRefParams) -> None:
        """Undo the acquire the receipt ``params`` records."""

    # ---- shared helpers

    def _ledger_move(self, node: UnifiedTreeNode, locking: bool) -> int:
        """Move a node's tokens between this component's evictable and protected sizes."""
        ct, n = self.component_type, self.reclaimable_value_len(node)
        core = self.tree_core
        sign = 1 if locking else -1
        core.component_evictable_size_[ct] -= sign * n
        core.component_protected_size_[ct] += sign * n
        return n
