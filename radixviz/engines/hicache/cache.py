"""SGLang's hierarchical radix cache (``mem_cache/hiradix_cache.py`` at 9fbe6800a): GPU + host.

Read it beside SGLang's file: the same functions, loops and names. This file holds the tree
(``inc_lock_ref`` and ``dec_lock_ref`` with ``_update_host_leaf_status``, ``match_prefix``
with ``_match_prefix_helper``, ``_split_node``, ``insert``); cache_transfers.py the moves between
the tiers (``write_backup``, ``writing_check``, ``loading_check``, ``evict``, ``evict_host``,
``load_back``), whose class ``HostTransfers`` subclasses today's cache (v2026/cache.py)
as SGLang's subclasses its ``RadixCache``; ``HiRadixCache`` builds on it.

A node lives on the device (``value``), on the host (``host_value``) or on both; ``evicted``
means no device copy, ``backuped`` a host copy. Copies go through the controller
(cache_controller.py) and are acknowledged later, when ``check_hicache_events`` runs (SGLang's
scheduler calls it every round; radixviz's ``sync`` waits for every copy, then calls it).

Where this file differs from SGLang's, it says so. Left out: the storage tier behind the
host (prefetch, backup to storage, their queues and threads), pinning, tensor-parallel
synchronisation, metrics and EAGLE bigram keys. Time is the logical clock of v2026/cache.py:
one tick per match, one per insert, two per node built. ``reset`` clears what SGLang leaves
behind (see there); cache_transfers.py lists its own differences.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import torch

from radixviz.cache.checks import LOCK_REF, check_release
from radixviz.cache.evict_policy import eviction_key
from radixviz.cache.hashes import check_hashable, split_node_hash_value
from radixviz.cache.snapshot import invalidate
from radixviz.cache.trace import EventKind as K, Tracer
from radixviz.cache.values import as_value
from radixviz.cache.write_policy import LOAD_BACK_THRESHOLD, WRITE_THROUGH_THRESHOLD, check_write_policy
from .cache_controller import HiCacheController
from .cache_head_bugs import HeadBugNames, check_head_bugs, guard
from .cache_host_pool import TokenToKVPoolHost, default_host_size
from .cache_leaves import LeafSet, Moved
from .node import TreeNode
from .snapshot import hicache_snapshot
from .cache_transfers import HostTransfers

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence
    from radixviz.cache.kv_events import KVEvent
    from radixviz.cache.pool import TokenToKVPool


class MatchResult(NamedTuple):
    """What ``match_prefix`` found (SGLang's ``MatchResult``, host-tier fields only)."""
    device_indices: torch.Tensor   # device slots of the matched prefix that is on the device
    last_device_node: TreeNode     # the deepest matched node with a device copy
    last_host_node: TreeNode       # the deepest matched node with a host copy
    host_hit_length: int           # matched tokens past the device prefix, on the host only


class HiRadixCache(HostTransfers):
    def __init__(self, device_pool: TokenToKVPool, page_size: int = 1, eviction_policy: str = "lru",
                 host_size: int | None = None, write_policy: str = "write_through",
                 enable_kv_events: bool = False, head_bugs: HeadBugNames = ()):
        write_policy = check_write_policy(write_policy)
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise ValueError(f"page_size must be a whole number >= 1, not {page_size!r}")
        self.kv_cache = device_pool
        if host_size is None:
            host_size = default_host_size(device_pool.size, page_size)
        if isinstance(host_size, int) and not isinstance(host_size, bool) and host_size <= device_pool.size:
            # SGLang asserts it: write-through relies on room for a copy of all the device holds
            raise ValueError(f"host size {host_size}: the host pool must be larger than the "
                             f"device pool ({device_pool.size} slots), as SGLang requires")
        self.token_to_kv_pool_host = TokenToKVPoolHost(device_pool, host_size, page_size)
        self.cache_controller = HiCacheController(device_pool, self.token_to_kv_pool_host, page_size,
                                                  write_policy=write_policy)
        # record the nodes with ongoing write through
        self.ongoing_write_through = {}
        # record the node segments with ongoing load back
        self.ongoing_load_back = {}
        self.loading_nodes = {}  # radixviz: last node of a load -> every node it loads (views)
        self.write_through_threshold = WRITE_THROUGH_THRESHOLD[write_policy]
        self.load_back_threshold = LOAD_BACK_THRESHOLD
        self.evictable_host_leaves = LeafSet()
        self.moved = Moved()  # radixviz: tokens copied and dropped, per tier (SGLang's metrics)
        self.head_bug_reports: list = []  # where SGLang's file would have stopped (cache_head_bugs.py)
        self._head_depth = 0              # guarded operations running (head_bugs.guard)
        self.set_head_bugs(head_bugs)
        super().__init__(page_size, eviction_policy, device=device_pool.device,
                         enable_kv_events=enable_kv_events)
        self.tracer = Tracer(__name__, self.snapshot)
        self.transfer_tracer = self.tracer.branch("radixviz.engines.hicache.cache_transfers")

    @property
    def write_policy(self) -> str:
        return self.cache_controller.write_policy

    def reset(self) -> None:
        self.cache_controller.reset()
        self.token_to_kv_pool_host.clear()
        self.evictable_host_leaves.clear()
        # radixviz: SGLang keeps these across a reset; a write-back eviction would then
        # wait for acknowledgements that were cleared with the controller's queues
        self.ongoing_write_through.clear()
        self.ongoing_load_back.clear()
        self.loading_nodes.clear()
        self.moved = Moved()
        self.head_bug_reports.clear()
        super().reset()  # step: kv.cleared
        self.evictable_leaves = LeafSet()  # SGLang's set; evict() heaps it afresh, as SGLang does
        self.root_node.host_value = self._empty  # the root counts as backed up, never evicted

    def set_write_policy(self, policy: str) -> None:
        """Write by ``policy`` from now on (SGLang changes it when a storage backend attaches)."""
        policy = check_write_policy(policy)
        self.cache_controller.write_policy = policy
        self.write_through_threshold = WRITE_THROUGH_THRESHOLD[policy]

    def set_head_bugs(self, bugs: HeadBugNames) -> None:
        """Bring back SGLang's 9fbe6800a lines for the bugs named (cache_head_bugs.py); () fixes both."""
        self.head_bugs = check_head_bugs(bugs)
        self._by_evicted = "host_leaf_by_evicted" in self.head_bugs
        self.token_to_kv_pool_host.watch_double_free = bool(self.head_bugs)
        guard(self, bool(self.head_bugs))   # where SGLang's file would raise: stop, report

    def set_eviction_policy(self, policy: str) -> None:
        """Order the eviction candidates of both tiers by ``policy`` from now on."""
        self.eviction_strategy, self.eviction_policy = eviction_key(policy), str(policy).lower()

    # --------------------------------------------------------------------- locks

    def inc_lock_ref(self, node: TreeNode) -> int:  # type: ignore[override]
        """Lock the path from ``node`` up to the root; return the change in evictable size (<= 0)."""
        # radixviz refuses a node outside the tree; with a head bug on, SGLang's file locks and
        # unlocks the node it is handed, in the tree or not (a load-back may have lost it)
        if not self.head_bugs or self._in_tree(node):
            check_release(self, node, _lock_ref, page_size=self.page_size, namespaced=True)
        tr = self.tracer
        outer = tr.op
        tr.op = outer or "inc_lock_ref"
        delta = 0
        while node is not self.root_node:
            if node.lock_ref == 0:
                self.evictable_size_ -= len(node.key)  # step: lock.evictable
                self.protected_size_ += len(node.key)
                delta -= len(node.key)
                if tr.active: tr.emit("lock.evictable", K.EVICTABLE, (node,), old=self.evictable_size_ + len(node.key), new=self.evictable_size_, protected=self.protected_size_, why="locked")
            node.lock_ref += 1  # step: lock.ref
            invalidate(node)
            self._update_leaf_status(node)
            self._update_host_leaf_status(node)
            if tr.active: tr.emit("lock.ref", K.REF, (node,), old=node.lock_ref - 1, new=node.lock_ref)
            node = node.parent
        tr.op = outer
        return delta

    def dec_lock_ref(self, node: TreeNode) -> int:  # type: ignore[override]
        """Release a lock taken by ``inc_lock_ref(node)``; return the change (>= 0).
        ValueError, changing nothing, when no lock was taken at ``node`` (checks.py)."""
        if not self.head_bugs or self._in_tree(node):   # (as in inc_lock_ref)
            check_release(self, node, _lock_ref, releasing=True, page_size=self.page_size, namespaced=True)
        tr = self.tracer
        outer = tr.op
        tr.op = outer or "dec_lock_ref"
        delta = 0
        while node is not self.root_node:
            if node.lock_ref == 1:
                self.evictable_size_ += len(node.key)  # step: unlock.evictable
                self.protected_size_ -= len(node.key)
                delta += len(node.key)
                if tr.active: tr.emit("unlock.evictable", K.EVICTABLE, (node,), old=self.evictable_size_ - len(node.key), new=self.evictable_size_, protected=self.protected_size_, why="unlocked")
            node.lock_ref -= 1  # step: unlock.ref
            invalidate(node)
            self._update_leaf_status(node)
            self._update_host_leaf_status(node)
            if tr.active: tr.emit("unlock.ref", K.REF, (node,), old=node.lock_ref + 1, new=node.lock_ref)
            node = node.parent
        tr.op = outer
        return delta

    def _update_host_leaf_status(self, node: TreeNode) -> None:
        # a candidate for host eviction: on the host only, unlocked, no child with a host copy
        if not node.evicted or node.lock_ref > 0:
            self.evictable_host_leaves.remove(node)
            return
        if self._by_evicted:
            for child in node.children.values():
                if child.evicted:  # 9fbe6800a's line (cache_head_bugs.py)
                    self.evictable_host_leaves.remove(node)
                    return
            self.evictable_host_leaves.add(node)
            return
        for child in node.children.values():
            # radixviz: 9fbe6800a asks ``child.evicted``. Under write_back a parent that is
            # demoted while its child's write-back is still pending then counts as a host
            # leaf, and a host eviction can delete it from above the child (orphaning the
            # child's host copy). A child that has a host copy, written or being written,
            # keeps its parent's host copy in place.
            if child.backuped:
                self.evictable_host_leaves.remove(node)
                return
        self.evictable_host_leaves.add(node)

    def _update_leaf_status(self, node: TreeNode) -> None:  # type: ignore[override]
        # a candidate for device eviction: on the device, unlocked, no child on the device
        if node.evicted or node.lock_ref > 0:
            self.evictable_leaves.remove(node)
            return
        for child in node.children.values():
            if not child.evicted:
                self.evictable_leaves.remove(node)
                return
        self.evictable_leaves.add(node)

    # ------------------------------------------------------------------ matching

    def match_prefix(self, key: str | Sequence[Hashable], extra_key: Hashable | None = None) -> MatchResult:
        """The longest cached prefix of ``key`` in whole pages (in namespace ``extra_key``),
        split by tier: the device
        slots of the part on the device, the deepest device node, the deepest node with a
        host copy, and how many tokens after the device part are on the host only.

        May split a node (on either tier) where the match stops inside an edge.
        """
        tr = self.tracer
        outer = tr.op
        tr.op = outer or "match_prefix"
        key = tuple(key) if not isinstance(key, tuple) else key
        if self.page_size != 1:
            page_aligned_len = len(key) // self.page_size * self.page_size
            if tr.active and page_aligned_len < len(key): tr.emit("match.page_cut", K.PAGE_CUT, (), kept=page_aligned_len, dropped=key[page_aligned_len:], page_size=self.page_size)
            key = key[:page_aligned_len]  # step: match.page_cut
        if len(key) == 0:
            if tr.active: tr.emit("match.result", K.RESULT, (self.root_node,), matched=0, slots=(), host_hit_length=0, last_host_node=self.root_node.id)
            tr.op = outer
            return MatchResult(self._empty, self.root_node, self.root_node, 0)

        value, last_node = self._match_prefix_helper(self.root_node, key, extra_key)
        if value:
            value = value[0] if len(value) == 1 else torch.cat(value)
        else:
            value = self._empty

        host_hit_length = 0
        last_host_node = last_node
        while last_node.evicted:
            host_hit_length += len(last_node.host_value)  # step: match.host_hit
            if tr.active: tr.emit("match.host_hit", K.HOST_HIT, (last_node,), tokens=len(last_node.host_value), total=host_hit_length, host_slots=tuple(last_node.host_value.tolist()))
            last_node = last_node.parent
        while not last_host_node.backuped:
            last_host_node = last_host_node.parent

        if tr.active: tr.emit("match.result", K.RESULT, (last_node,), matched=len(value), slots=tuple(value.tolist()), host_hit_length=host_hit_length, last_host_node=last_host_node.id)
        tr.op = outer
        return MatchResult(value, last_node, last_host_node, host_hit_length)  # step: match.result

    def _match_prefix_helper(self, node: TreeNode, key: tuple, extra_key: Hashable | None = None):  # type: ignore[override]
        tr = self.tracer
        access_time = self._tick()
        node.last_access_time = access_time  # step: match.visit
        if node._snap is not None: invalidate(node)
        if tr.active: tr.emit("match.visit", K.VISIT, (node,), time=access_time)
        child_key = self.get_child_key_fn(key, extra_key=extra_key)
        value = []

        while len(key) > 0 and child_key in node.children:
            child = node.children[child_key]
            child.last_access_time = access_time  # step: match.touch
            if child._snap is not None: invalidate(child)
            if tr.active: tr.emit("match.touch", K.VISIT, (child,), time=access_time)
            prefix_len = self.key_match_fn(child.key, key)  # step: match.page_compare
            if tr.active: tr.emit("match.page_compare", K.COMPARE, (child,), common=prefix_len, page_size=self.page_size, pages=prefix_len // self.page_size)
            if prefix_len < len(child.key):
                new_node = self._split_node(child.key, child, prefix_len)
                if not new_node.evicted:
                    value.append(new_node.value)  # step: match.take_split
                    if tr.active: tr.emit("match.take_split", K.APPEND, (new_node,), slots=tuple(new_node.value.tolist()))
                node = new_node
                break
            else:
                if not child.evicted:
                    value.append(child.value)  # step: match.take
                    if tr.active: tr.emit("match.take", K.APPEND, (child,), slots=tuple(child.value.tolist()))
                node = child
                key = key[prefix_len:]

                if len(key):
                    child_key = self.get_child_key_fn(key, extra_key=extra_key)

        return value, node

    def _split_node(self, key: tuple, child: TreeNode, split_len: int) -> TreeNode:  # type: ignore[override]
        # child node split into new_node -> child; the new node takes the front of both
        # copies (device and host), the locks and the hit count
        invalidate(child)  # before the cut, while its old ancestors are still above it
        extra_key = child.extra_key  # both halves stay in the child's namespace
        new_node = self._new_node(priority=child.priority)
        new_node.extra_key = extra_key
        new_node.children = {self.get_child_key_fn(key[split_len:], extra_key=extra_key): child}
        new_node.parent = child.parent
        new_node.lock_ref = child.lock_ref
        new_node.key = child.key[:split_len]
        new_node.hit_count = child.hit_count

        # split value and host value if exists
        if child.evicted:
            new_node.value = None  # type: ignore[assignment]  # evicted, as the child
        else:
            new_node.value = child.value[:split_len].clone()
            child.value = child.value[split_len:].clone()
        if child.backuped:
            new_node.host_value = child.host_value[:split_len].clone()
            child.host_value = child.host_value[split_len:].clone()
        new_node.hash_value, child.hash_value = split_node_hash_value(
            child.hash_value, split_len, self.page_size)
        child.parent = new_node
        child.key = child.key[split_len:]
        new_node.parent.children[self.get_child_key_fn(key, extra_key=extra_key)] = new_node  # step: split
        if self.tracer.active: self.tracer.emit("split", K.SPLIT, (new_node, child), at=split_len)
        return new_node

    # ----------------------------------------------------------------- insertion

    def insert(self, key: str | Sequence[Hashable], value: torch.Tensor | Sequence[int] | None = None,
               priority: int | None = 0, extra_key: Hashable | None = None, chunked: bool = False) -> int:
        """Insert ``key`` (whole pages) with its device slots; return how many leading
        tokens the tree already held on the device. A host-only node on the way takes the
        new slots (its KV was recomputed), so those count as new: the caller frees only
        the first ``prefix_len``. Under the write-through policies an insert may start
        writes to the host."""
        key = tuple(key) if not isinstance(key, tuple) else key
        if len(key) % self.page_size:
            raise ValueError(f"insert needs whole pages: {len(key)} tokens is not a multiple "
                             f"of page size {self.page_size}")
        value = as_value(key, value, self.device)
        if self.enable_kv_events:
            check_hashable(key)  # a page hash needs token ids: refuse before any change
        if priority is None:
            priority = 0
        if len(key) == 0:
            return 0
        tr = self.tracer
        outer = tr.op
        tr.op = outer or "insert"
        length = len(key)

        access_time = self._tick()
        node = self.root_node
        child_key = self.get_child_key_fn(key, extra_key=extra_key)
        total_prefix_length = 0

        while len(key) > 0 and child_key in node.children:
            node = node.children[child_key]
            node.last_access_time = access_time  # step: insert.touch
            node.priority = max(node.priority, priority)
            invalidate(node)
            if tr.active: tr.emit("insert.touch", K.VISIT, (node,), time=access_time)
            prefix_len = self.key_match_fn(node.key, key)  # step: insert.page_compare
            if tr.active: tr.emit("insert.page_compare", K.COMPARE, (node,), common=prefix_len, page_size=self.page_size, pages=prefix_len // self.page_size)

            if prefix_len == len(node.key):
                if node.evicted:
                    # change the reference if the node is evicted
                    # this often happens in the case of KV cache recomputation
                    node.value = value[:prefix_len].clone()  # step: insert.refill
                    self.evictable_size_ += len(node.value)
                    invalidate(node)
                    if tr.active: tr.emit("insert.refill", K.REFILL, (node,), slots=tuple(node.value.tolist()), host_slots=tuple(node.host_value.tolist()), old=self.evictable_size_ - len(node.value), new=self.evictable_size_)
                    self._update_leaf_status(node)
                    self._update_host_leaf_status(node)
                    # update parent status as a new leaf is added into device
                    self._update_leaf_status(node.parent)
                else:
                    self._inc_hit_count(node, chunked)
                    total_prefix_length += prefix_len
            else:
                # partial match, split the node
                new_node = self._split_node(node.key, node, prefix_len)
                # shared-prefix node should also reflect max priority
                new_node.priority = max(new_node.priority, priority)
                if new_node.evicted:
                    new_node.value = value[:prefix_len].clone()  # step: insert.refill_split
                    self.evictable_size_ += len(new_node.value)
                    invalidate(new_node)
                    if tr.active: tr.emit("insert.refill_split", K.REFILL, (new_node,), slots=tuple(new_node.value.tolist()), host_slots=tuple(new_node.host_value.tolist()), old=self.evictable_size_ - len(new_node.value), new=self.evictable_size_)
                    self._update_leaf_status(new_node)
                    self._update_host_leaf_status(new_node)
                    # update parent status as a new leaf is added into device
                    self._update_leaf_status(new_node.parent)
                else:
                    self._inc_hit_count(new_node, chunked)
                    total_prefix_length += prefix_len
                node = new_node

            key = key[prefix_len:]
            value = value[prefix_len:]

            if len(key):
                child_key = self.get_child_key_fn(key, extra_key=extra_key)

        if len(key):
            new_node = self._new_node(priority=priority)
            new_node.parent = node
            new_node.key = key
            new_node.extra_key = extra_key
            new_node.value = value.clone()
            node.children[child_key] = new_node  # step: insert.create
            invalidate(node)
            if tr.active: tr.emit("insert.create", K.CREATE, (new_node,), length=len(key), hit_count=0, priority=priority)
            self.evictable_size_ += len(value)  # step: insert.evictable
            if tr.active: tr.emit("insert.evictable", K.EVICTABLE, (new_node,), old=self.evictable_size_ - len(value), new=self.evictable_size_, why="created")
            self._update_leaf_status(node)
            self._update_leaf_status(new_node)
            self._record_store_event(new_node)  # step: kv.stored

            if self.cache_controller.write_policy != "write_back":
                self._inc_hit_count(new_node, chunked)
        if tr.active: tr.emit("insert.result", K.RESULT, (), prefix_len=total_prefix_length, length=length)
        tr.op = outer
        return total_prefix_length  # step: insert.result

    # ------------------------------------------------------------------- helpers

    def _new_node(self, priority: int = 0) -> TreeNode:
        # two clock reads, as SGLang's node constructor makes: last access, then creation
        last_access = self._tick()
        node = TreeNode(self._next_id, last_access, self._tick(), priority)
        self._next_id += 1
        return node

    def total_size(self) -> int:
        # tokens with a device copy: every one of them is either locked or not
        return self.evictable_size_ + self.protected_size_

    def host_size(self) -> int:
        """Tokens the host pool holds (copies being written included)."""
        return self.token_to_kv_pool_host.used_size()

    def snapshot(self):
        """An immutable picture of both tiers as they are now."""
        return hicache_snapshot(self)

    def _queue_event(self, event: KVEvent, nodes: tuple) -> None:
        # a "removed" is born in an eviction (cache_transfers.py); "stored" and "cleared" here
        self.kv_event_queue.append(event)
        tr = self.transfer_tracer if event.kind == "removed" else self.tracer
        if tr.active: tr.emit(f"kv.{event.kind}", K.KV_EVENT, nodes, event=event)


_lock_ref = LOCK_REF  # a node's lock count, read in C (checks.py)
