"""``UnifiedTreeCore``: the unified radix tree itself (v0.5.23's ``unified_tree_core.py``, the
Python core, ``tree_core_backend="python"``; the wheel's default Rust core runs the same walk).

It owns the nodes, each auxiliary component's LRU list, each component's evictable and
protected sizes and the set of evictable leaves, and it drives the components' hooks. It
never touches a pool: the steps that free or fill slots hand actions to the cache (cache.py).
This file: reset, match, split, new leaves, leaf bookkeeping and locks; the insert walk
(cache_insert.py) and eviction (cache_evict.py) are its methods too, written beside it.

Where this differs from SGLang's file, it says so. Time is a logical clock: SGLang's float
counter counts 1.0 a read and a match stamps its path 0.00001 apart; here a read counts
100,000 and a path step 1 (the same order, in integers). Node ids count the tree's nodes only
(SGLang's count every node made, the LRU lists' sentinels too). SWA window stamps count from
1 per cache. Left out: the host tier, storage, the external linker, sessions, bigram (EAGLE)
keys, namespaces (extra keys, cache salts) and rotation bases. KV events: cache_events.py.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch

from ...cache.evict_policy import eviction_key
from ...cache.hashes import split_node_hash_value
from ...cache.keys import get_child_key, match
from ...cache.snapshot import invalidate
from ...cache.trace import EventKind as K
from .cache_component import LRURefreshPhase
from .cache_events import KVCacheEventRecorder
from .cache_evict import TreeEvict
from .cache_insert import InsertWalkState, TreeInsert
from .cache_kinds import UnifiedKind as UK, WingBranch
from .cache_lru import UnifiedLRUList
from .cache_params import IncLockRefResult, MatchResult, MatchStop
from .node import BASE_COMPONENT_TYPE, ComponentType as CT, UnifiedTreeNode

if TYPE_CHECKING:
    from .cache_component import TreeComponent
    from .cache_kinds import WingTracer
    from .cache_params import DecLockRefParams
    from .node import ComponentType

TICK = 100_000  # one read of SGLang's clock (1.0); a match's path is stamped 1 (0.00001) apart


class UnifiedTreeCore(TreeInsert, TreeEvict):
    def __init__(self, components: dict[ComponentType, TreeComponent], page_size: int,
                 eviction_policy: str, tracer: WingTracer, device: torch.device,
                 kv_events: KVCacheEventRecorder | None = None) -> None:
        self.page_size = page_size
        self.event_recorder = kv_events or KVCacheEventRecorder(False, page_size)
        self.component_types = tuple(components)
        self.components_by_type = components
        self.components = tuple(components.values())
        self.eviction_policy = str(eviction_policy).lower()
        self.eviction_strategy = eviction_key(eviction_policy)
        self.tracer = tracer
        self.tr = WingBranch(tracer, __name__)
        # the steps written in the insert and eviction files carry those files as their source
        self.tr_insert = WingBranch(tracer, TreeInsert.__module__)
        self.tr_evict = WingBranch(tracer, TreeEvict.__module__)
        for component in self.components:
            component.tree_core = self
            component.attach_tracer(tracer)
        self.device = device
        self.reset()

    def reset(self) -> None:
        """An empty tree: the root, empty LRU lists, zero sizes, no leaves."""
        for component in self.components:
            if component.is_evict_device_ongoing:
                component.evict_device_end()
        self._clock = 0
        self._next_id = 0
        self._next_uuid = 0
        self._node_arena: dict[int, UnifiedTreeNode] = {}
        self._ongoing_insert_walk_state: InsertWalkState | None = None
        self.root_node = self._new_node()
        self.root_node.priority = -sys.maxsize  # any insert's priority replaces it
        self.root_node.key = ()
        self.root_node.hash_value = []
        self.root_node.component_data[BASE_COMPONENT_TYPE].value = torch.empty(
            (0,), dtype=torch.int64, device=self.device)
        for ct in self.component_types:
            self.root_node.component_data[ct].lock_ref = 1  # never unlocked, never evicted
        self.component_evictable_size_ = dict.fromkeys(self.component_types, 0)
        self.component_protected_size_ = dict.fromkeys(self.component_types, 0)
        self.lru_lists = {ct: UnifiedLRUList(ct) for ct in self.component_types}
        self.evictable_device_leaves: set[UnifiedTreeNode] = set()

    # ---- the clock and the node arena

    def tick(self) -> int:
        self._clock += TICK
        return self._clock

    def _new_node(self, priority: int = 0) -> UnifiedTreeNode:
        # two clock reads, as SGLang's node constructor makes: last access, then creation
        node = UnifiedTreeNode(self._next_id, self.tick(), self.tick(), priority)
        self._next_id += 1
        self._node_arena[node.id] = node
        return node

    def node_by_id(self, node_id: int) -> UnifiedTreeNode:
        return self._node_arena[node_id]

    def next_component_uuid(self) -> int:
        self._next_uuid += 1
        return self._next_uuid

    def child_key(self, key: tuple, start: int = 0):
        return get_child_key(key, self.page_size, start)

    def key_match(self, edge: tuple, key: tuple, start: int = 0) -> int:
        """Tokens ``edge`` shares with ``key[start:]``, in whole pages."""
        common = match(edge, key, start)
        return common - common % self.page_size

    # ---- match

    def match_prefix(self, key: tuple) -> tuple[MatchResult, list]:
        """The longest prefix of ``key`` every component accepts, and the Full slot chunks of
        the whole walk. May split a node: a walk that ends inside an edge cuts it there."""
        tr = self.tr
        if len(key) == 0:
            return self.empty_match_result(), []
        page_aligned_len = len(key) // self.page_size * self.page_size
        if tr.active and page_aligned_len < len(key): tr.emit("match.page_cut", K.PAGE_CUT, (), kept=page_aligned_len, dropped=key[page_aligned_len:], page_size=self.page_size)
        key = key[:page_aligned_len]  # step: match.page_cut
        if len(key) == 0:
            return self.empty_match_result(), []
        return self._match_prefix_helper(key)

    def empty_match_result(self) -> MatchResult:
        root = self.root_node.id
        return MatchResult(0, root, root, device_indices=self.root_node.full_value(),
                           stop=MatchStop(root, (), ()))

    def _match_prefix_helper(self, key: tuple) -> tuple[MatchResult, list]:
        tr = self.tr
        node = self.root_node
        key_offset = 0
        child_key = self.child_key(key, key_offset)
        value: list[torch.Tensor] = []
        best_match_node = node
        best_match_device_value_len = 0
        full_kv_hit_length = 0
        validators = tuple(component.create_match_validator() for component in self.components)
        verdicts: tuple = ()
        walked: list[UnifiedTreeNode] = []   # the nodes whose Full slots ``value`` holds, in order

        def update_best_if_valid(node: UnifiedTreeNode) -> None:
            nonlocal best_match_node, best_match_device_value_len, verdicts
            # every validator sees every node: their state (the SWA window count) must follow
            verdicts = tuple((c.component_type, v(node)) for c, v in zip(self.components, validators))  # step: match.validate
            if tr.active: tr.emit("match.validate", UK.VALIDATE, (node,), verdicts=tuple((str(ct), ok) for ct, ok in verdicts), reasons=tuple((str(c.component_type), v.reason) for (c, v), (_, ok) in zip(zip(self.components, validators), verdicts) if not ok))
            if all(ok for _, ok in verdicts):
                if tr.active:   # the nodes this acceptance adds to what the match returns, this one first
                    taken = [node, *walked[best_match_device_value_len:len(value) - 1]]
                    tr.emit("match.best", K.APPEND, taken, matched=sum(len(v) for v in value), slots=tuple(torch.cat(value[best_match_device_value_len:]).tolist()))
                best_match_node = node  # step: match.best
                best_match_device_value_len = len(value)

        while key_offset < len(key) and child_key in node.children:
            child = node.children[child_key]
            if child.evicted:
                break  # a host tier's dead node; none here
            prefix_len = self.key_match(child.key, key, key_offset)  # step: match.compare
            full_kv_hit_length += prefix_len
            if tr.active: tr.emit("match.compare", K.COMPARE, (child,), common=prefix_len, edge=len(child.key), page_size=self.page_size)
            if prefix_len < len(child.key):
                node = self._split_node(child.key, child, prefix_len)  # step: match.split
                if tr.active: tr.emit("match.split", K.SPLIT, (node, child), at=prefix_len)
                value.append(node.full_value())
                walked.append(node)
                update_best_if_valid(node)
                break
            value.append(child.full_value())  # step: match.take
            node = child
            walked.append(node)
            if tr.active: tr.emit("match.take", UK.WALK, (node,), slots=tuple(node.full_value().tolist()))
            update_best_if_valid(node)
            key_offset += prefix_len
            if key_offset < len(key):
                child_key = self.child_key(key, key_offset)

        reasons = tuple((c.component_type, v.reason) for (c, v), (_, ok)
                        in zip(zip(self.components, validators), verdicts) if not ok)
        stop = MatchStop(node.id, verdicts, reasons)
        result = self._match_post_processor(value, best_match_node, best_match_device_value_len,
                                            full_kv_hit_length, node.id if node is not self.root_node else None)
        return result._replace(stop=stop), value

    def _match_post_processor(self, value: list, best_match_node: UnifiedTreeNode,
                              best_match_device_value_len: int, full_kv_hit_length: int,
                              last_visited_node_id: int | None) -> MatchResult:
        tr = self.tr
        for component in self.components:
            if component.component_type != BASE_COMPONENT_TYPE:  # Full orders by time, not a list
                component.refresh_lru(LRURefreshPhase.MATCH_END, best_match_node, self.root_node)
        cur_time = self.tick()
        node_update: UnifiedTreeNode | None = best_match_node
        while node_update is not None:
            node_update.last_access_time = cur_time  # step: match.stamp
            invalidate(node_update)
            cur_time -= 1  # parents a little older than their children
            node_update = node_update.parent
        if tr.active: tr.emit("match.stamp", K.VISIT, (best_match_node,), time=cur_time + 1)
        chunks = value[:best_match_device_value_len]
        if not chunks:
            indices = self.root_node.full_value()
        else:
            indices = chunks[0] if len(chunks) == 1 else torch.cat(chunks)
        result = MatchResult(device_prefix_len=int(indices.numel()), last_device_node=best_match_node.id,
                             best_match_node=best_match_node.id, full_kv_hit_length=full_kv_hit_length,
                             last_visited_node_id=last_visited_node_id, device_indices=indices)
        for component in self.components:
            result = component.finalize_match_result_in_tree_core(result, value, best_match_device_value_len)  # step: match.branch
        if tr.active and (result.swa_branching_seqlen is not None or result.mamba_branching_seqlen is not None): tr.emit("match.branch", UK.BRANCH, (best_match_node,), swa=result.swa_branching_seqlen, mamba=result.mamba_branching_seqlen)
        return result

    def _touch_node(self, node: UnifiedTreeNode) -> None:
        node.last_access_time = self.tick()
        invalidate(node)
        if node is not self.root_node:
            for component in self.components:
                if component.component_type != BASE_COMPONENT_TYPE:
                    component.refresh_lru(LRURefreshPhase.WALKDOWN, node, self.root_node)

    # ---- split and new leaves

    def _split_node(self, key: tuple, child: UnifiedTreeNode, split_len: int) -> UnifiedTreeNode:
        """Cut ``child``'s edge after ``split_len`` tokens: a new node takes the first part and
        the old object keeps the rest (locks and handles on it stay valid)."""
        invalidate(child)  # before the cut, while its old ancestors are still above it
        new_node = self._new_node(priority=child.priority)
        new_node.children = {self.child_key(key, split_len): child}
        new_node.parent = child.parent
        new_node.key = child.key[:split_len]
        new_node.hit_count = child.hit_count
        new_node.creation_time = child.creation_time
        new_node.hash_value, child.hash_value = split_node_hash_value(child.hash_value, split_len, self.page_size)
        child.parent = new_node
        child.key = child.key[split_len:]
        for component in self.components:
            component.redistribute_on_node_split(new_parent=new_node, child=child)
        new_node.parent.children[self.child_key(key)] = new_node  # step: split
        # the prefix goes beside the suffix in each list that holds it, just older
        for ct in self.component_types:
            if ct != BASE_COMPONENT_TYPE and new_node.component_data[ct].value is not None:
                lru = self.lru_lists[ct]
                if not lru.in_list(new_node):
                    lru.insert_after(child, new_node)
        child.last_access_time = self.tick()
        self._update_evictable_leaf_sets(new_node)
        self._update_evictable_leaf_sets(child)
        return new_node

    def _add_new_node(self, parent: UnifiedTreeNode, key: tuple, value: torch.Tensor,
                      priority: int = 0) -> UnifiedTreeNode:
        new_node = self._new_node(priority=priority)
        new_node.parent = parent
        new_node.key = key
        new_node.component_data[BASE_COMPONENT_TYPE].value = value.clone()
        parent.children[self.child_key(key)] = new_node  # step: insert.create
        invalidate(parent)
        n = self.components_by_type[BASE_COMPONENT_TYPE].reclaimable_value_len(new_node)
        self.component_evictable_size_[BASE_COMPONENT_TYPE] += n
        self._update_evictable_leaf_sets(new_node)
        self._update_evictable_leaf_sets(parent)
        self.event_recorder.record_store(new_node)
        if self.tr.active: self.tr.emit("insert.create", K.CREATE, (new_node,), length=len(key), slots=tuple(value.tolist()), priority=priority)
        return new_node

    def set_component_device_value(self, node_id: int, component_type: ComponentType, value: torch.Tensor) -> None:
        """Store an auxiliary component's data on a node (SWA rebuilt, a Mamba state kept)."""
        assert component_type != BASE_COMPONENT_TYPE
        node = self.node_by_id(node_id)
        cd = node.component_data[component_type]
        cd.value = value
        invalidate(node)
        self.lru_lists[component_type].insert_mru(node)
        n = self.components_by_type[component_type].reclaimable_value_len(node)
        # data arriving under a lock is protected; the last release makes it evictable
        if cd.lock_ref > 0:
            self.component_protected_size_[component_type] += n
        else:
            self.component_evictable_size_[component_type] += n

    # ---- leaves

    def _is_device_leaf(self, node: UnifiedTreeNode) -> bool:
        """Unlocked in every component, Full KV present, and no child holding Full KV."""
        if node is self.root_node or node.evicted:
            return False
        if any(cd.lock_ref > 0 for cd in node.component_data):
            return False
        return not any(child.component_data[BASE_COMPONENT_TYPE].value is not None
                       for child in node.children.values())

    def _update_evictable_leaf_sets(self, node: UnifiedTreeNode) -> None:
        if self._is_device_leaf(node):
            self.evictable_device_leaves.add(node)
        else:
            self.evictable_device_leaves.discard(node)

    # ---- locks

    def inc_lock_ref(self, node_id: int, skip_lock_components: tuple = ()) -> IncLockRefResult:
        node = self.node_by_id(node_id)
        skipped = tuple(skip_lock_components)
        result = IncLockRefResult(node_id=node.id, skipped_lock_components=skipped)
        for component in self.components:
            if component.component_type not in skipped:
                result = component.acquire_component_lock(node, result)
        self._update_evictable_leaf_sets(node)
        return result

    def _release_components(self, node: UnifiedTreeNode, params: DecLockRefParams,
                            skip_swa_and_below: bool = False) -> None:
        """Release what the receipt took, auxiliaries first (Full's walk then sees their counts)."""
        swa_priority = None
        if skip_swa_and_below and CT.SWA in self.components_by_type:
            swa_priority = self.components_by_type[CT.SWA].eviction_priority(is_leaf=False)
        for component in reversed(self.components):
            ct = component.component_type
            if ct in params.skipped_lock_components:
                continue
            if swa_priority is not None and (ct == CT.SWA or component.eviction_priority(False) < swa_priority):
                continue
            component.release_component_lock(node, params)

    def dec_lock_ref(self, node_id: int, params: DecLockRefParams, skip_swa: bool = False) -> None:
        node = self.node_by_id(node_id)
        assert params.node_id == node.id, f"a receipt of node #{params.node_id} released on #{node.id}"
        self._release_components(node, params, skip_swa_and_below=skip_swa)
        self._update_evictable_leaf_sets(node)

    # ---- sizes and paths

    def evictable_size(self) -> int:
        return self.component_evictable_size_[BASE_COMPONENT_TYPE]

    def protected_size(self) -> int:
        return self.component_protected_size_[BASE_COMPONENT_TYPE]

    def component_evictable_size(self, component_type: ComponentType) -> int:
        return self.component_evictable_size_.get(component_type, 0)

    def component_protected_size(self, component_type: ComponentType) -> int:
        return self.component_protected_size_.get(component_type, 0)

    def collect_full_device_indices(self, node_id: int) -> torch.Tensor:
        """The Full slots on the path from the root down to the node."""
        chunks = []
        node = self.node_by_id(node_id)
        while node is not self.root_node:
            chunks.append(node.full_value())
            node = node.parent
        if not chunks:
            return self.root_node.full_value()
        return torch.cat(chunks[::-1])

    def total_size(self) -> tuple[int, int]:
        """(Full tokens, tokens and states of every other component) the tree holds."""
        total = aux = 0
        stack = [self.root_node]
        while stack:
            node = stack.pop()
            for ct in self.component_types:
                value = node.component_data[ct].value
                if value is not None:
                    if ct == BASE_COMPONENT_TYPE:
                        total += len(value)
                    else:
                        aux += len(value)
            stack.extend(node.children.values())
        return total, aux
