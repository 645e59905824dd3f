"""SGLang's radix cache as of March 2026 (upstream commit 9fbe6800a), GPU tier only.

Read it beside SGLang's ``python/sglang/srt/mem_cache/radix_cache.py``: the same functions
(``match_prefix`` and ``_match_prefix_helper``, ``insert`` and ``_insert_helper``,
``_split_node``, ``evict``, ``inc_lock_ref``/``dec_lock_ref``, ``_delete_leaf``,
``_update_leaf_status``), the same loops and the same names. What changed since the first
release, and is reproduced here step for step:

- pages: with ``page_size`` > 1 a child is filed under its first page (``get_child_key``),
  edges are compared a page at a time and a match key is cut to whole pages first (#4356);
- eviction is pluggable: seven policies, each a sort key on the unlocked leaves
  (evict_policy.py); the callback runs once per evicted node, in pop order;
- ``ref_counter`` became ``lock_ref``, and the cache keeps a protected (locked) size beside
  the evictable one;
- nodes carry ``hit_count`` (raised by inserts only), ``priority`` (the max of the inserts
  through them) and ``creation_time``; time comes from a monotonic clock (#6211);
- namespaces: a key with an ``extra_key`` (a LoRA adapter, a cache salt) files its child
  under ``(extra_key, first page)``, so namespaces never share a node;
- with ``enable_kv_events``, page hashes (hashes.py) and KV events (cache_kv_record.py).

Where this file differs from SGLang's, it says so: time is a logical clock (each place SGLang
reads ``time.monotonic()`` takes the next tick: once per match and once per insert, and twice
per node built), the evictable leaves stay ordered from one ``evict`` to the next
(cache_candidates.py: same nodes popped in the same order), a match of a single edge returns that
edge's slots without copying them, ``insert`` refuses a key that is not whole pages (SGLang
trusts its callers), ``dec_lock_ref`` refuses a lock nobody took (checks.py), and edges are
compared without SGLang's check that both keys share a namespace (the child key ensures it).

The line that does each step ends with ``# step: LABEL``; the ``if tr.active: tr.emit(...)``
after it reports the step to an observer (trace.py) and costs one attribute test when nobody
watches; ``invalidate(node)`` keeps snapshots true. The code pane hides both by default.

Left out: the host-memory tier, bigram (EAGLE) keys, chunked inserts, pinned nodes, metrics.
"""
from __future__ import annotations

import sys
from functools import partial
from typing import TYPE_CHECKING

import torch

from radixviz.cache.checks import LOCK_REF, check_release
from radixviz.cache.evict_policy import eviction_key
from radixviz.cache.hashes import check_hashable, split_node_hash_value
from radixviz.cache.keys import as_key, get_child_key, key_match_paged, match
from radixviz.cache.snapshot import invalidate
from radixviz.cache.trace import EventKind as K, Tracer
from radixviz.cache.values import as_value
from .cache_candidates import CandidateHeap
from .cache_kv_record import KVEventRecorder
from .cache_watched import Watched
from .node import TreeNode

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence


class RadixCache(Watched, KVEventRecorder):
    def __init__(self, page_size: int = 1, eviction_policy: str = "lru", device: str | torch.device = "cpu",
                 enable_kv_events: bool = False):
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise ValueError(f"page_size must be a whole number >= 1, not {page_size!r}")
        self.page_size = page_size
        self.enable_kv_events = bool(enable_kv_events)
        self.kv_event_queue: list = []
        self.device = torch.device(device)
        if page_size == 1:
            self.key_match_fn = match
            self.get_child_key_fn = get_child_key
        else:
            self.key_match_fn = partial(key_match_paged, page_size=page_size)
            self.get_child_key_fn = partial(get_child_key, page_size=page_size)
        self.eviction_policy = str(eviction_policy).lower()
        self.eviction_strategy = eviction_key(eviction_policy)  # a sort key: smallest goes first
        self.tracer = Tracer(__name__, self.snapshot)
        self._empty = torch.empty((0,), dtype=torch.int64, device=self.device)
        self.reset()

    # ---------------------------------------------------------------- public API

    def reset(self) -> None:
        self._clock = 0
        self._next_id = 0
        # unlocked childless nodes, ordered by the policy's key (SGLang keeps a set)
        self.evictable_leaves = CandidateHeap(self.eviction_strategy)
        # the root starts at the lowest priority, so any insert's priority replaces it
        self.root_node = self._new_node(priority=-sys.maxsize)
        self.root_node.key = ()  # SGLang's root: an empty key
        self.root_node.value = self._empty
        self.root_node.lock_ref = 1  # never unlocked, so never evicted
        self.root_node.hash_value = []
        self.evictable_size_ = 0
        self.protected_size_ = 0
        self._record_all_cleared_event()  # step: kv.cleared

    def match_prefix(self, key: str | Sequence[Hashable], extra_key: Hashable | None = None):
        """``(slots, last_node)`` for the longest cached prefix of ``key`` in whole pages,
        within namespace ``extra_key`` (None: the keys without one).

        May split a node: when the match stops inside an edge, the edge is cut there so that
        ``last_node`` covers exactly the matched tokens. ``slots`` may be the tree's own
        tensor: read it, do not write to it. A key shorter than a page touches nothing.
        """
        key = as_key(key)
        tr = self.tracer
        tr.op = "match_prefix"
        if self.page_size != 1:
            page_aligned_len = len(key) // self.page_size * self.page_size
            if tr.active and page_aligned_len < len(key): tr.emit("match.page_cut", K.PAGE_CUT, (), kept=page_aligned_len, dropped=key[page_aligned_len:], page_size=self.page_size)
            key = key[:page_aligned_len]  # step: match.page_cut
        if len(key) == 0:
            if tr.active: tr.emit("match.result", K.RESULT, (self.root_node,), matched=0, slots=())
            return self._empty, self.root_node

        value, last_node = self._match_prefix_helper(self.root_node, key, extra_key)
        # SGLang concatenates always; the slots of a single edge are returned uncopied
        if value:
            value = value[0] if len(value) == 1 else torch.cat(value)  # step: match.result
        else:
            value = self._empty
        if tr.active: tr.emit("match.result", K.RESULT, (last_node,), matched=len(value), slots=tuple(value.tolist()))
        return value, last_node

    def insert(self, key: str | Sequence[Hashable], value: torch.Tensor | Sequence[int] | None = None,
               priority: int = 0, extra_key: Hashable | None = None) -> int:
        """Insert ``key`` (whole pages) with its slots in namespace ``extra_key``; return how
        many leading tokens the tree already held (the caller frees its own copies of those)."""
        key = as_key(key)
        if len(key) % self.page_size:
            raise ValueError(f"insert needs whole pages: {len(key)} tokens is not a multiple "
                             f"of page size {self.page_size}")
        value = as_value(key, value, self.device)  # converts, or refuses before any change
        if self.enable_kv_events:
            check_hashable(key)  # a page hash needs token ids: refuse before any change
        tr = self.tracer
        tr.op = "insert"
        prefix_len = self._insert_helper(self.root_node, key, value, priority, extra_key)
        if tr.active: tr.emit("insert.result", K.RESULT, (), prefix_len=prefix_len, length=len(key))
        return prefix_len  # step: insert.result

    def evict(self, num_tokens: int, evict_callback: Callable[[torch.Tensor], object]) -> int:
        """Evict unlocked leaves, smallest policy key first, until ``num_tokens`` tokens are
        gone or none is left; ``evict_callback(slots)`` frees each one. Returns tokens evicted."""
        tr = self.tracer
        tr.op = "evict"
        # SGLang heaps every evictable leaf afresh here; the lasting heap pops the same
        # nodes in the same order (cache_candidates.py)
        eviction_heap = self.evictable_leaves  # step: evict.heap
        if tr.active: self._emit_heap(num_tokens)

        num_evicted = 0
        while num_evicted < num_tokens and len(eviction_heap):  # step: evict.result
            x = eviction_heap.pop()  # step: evict.pop
            if tr.active: tr.emit("evict.pop", K.POP, (x,), key=self.eviction_strategy(x), policy=self.eviction_policy, is_root=False)

            evict_callback(x.value)  # step: evict.free
            num_evicted += len(x.value)
            if tr.active: tr.emit("evict.free", K.FREE, (x,), slots=tuple(x.value.tolist()), freed=len(x.value))
            self._delete_leaf(x)
            self._record_remove_event(x)  # step: kv.removed
        if tr.active: tr.emit("evict.result", K.RESULT, (), evicted=num_evicted, target=num_tokens)
        return num_evicted

    def inc_lock_ref(self, node: TreeNode) -> int:
        """Lock the path from ``node`` up to the root; return the change in evictable size (<= 0)."""
        check_release(self, node, _lock_ref, page_size=self.page_size, namespaced=True)
        tr = self.tracer
        tr.op = "inc_lock_ref"
        delta = 0
        while node is not self.root_node:
            if node.lock_ref == 0:
                self.evictable_size_ -= len(node.key)  # step: lock.evictable
                self.protected_size_ += len(node.key)
                delta -= len(node.key)
                if tr.active: tr.emit("lock.evictable", K.EVICTABLE, (node,), old=self.evictable_size_ + len(node.key), new=self.evictable_size_, protected=self.protected_size_, why="locked")
            node.lock_ref += 1  # step: lock.ref
            if node._snap is not None: invalidate(node)
            self._update_leaf_status(node)
            if tr.active: tr.emit("lock.ref", K.REF, (node,), old=node.lock_ref - 1, new=node.lock_ref)
            node = node.parent
        if tr.active: tr.emit("lock.result", K.RESULT, (), delta=delta)
        return delta  # step: lock.result

    def dec_lock_ref(self, node: TreeNode) -> int:
        """Release a lock taken by ``inc_lock_ref(node)``; return the change (>= 0).
        ValueError, changing nothing, when no lock was taken at ``node`` (checks.py)."""
        check_release(self, node, _lock_ref, releasing=True, page_size=self.page_size, namespaced=True)
        tr = self.tracer
        tr.op = "dec_lock_ref"
        delta = 0
        while node is not self.root_node:
            if node.lock_ref == 1:
                self.evictable_size_ += len(node.key)  # step: unlock.evictable
                self.protected_size_ -= len(node.key)
                delta += len(node.key)
                if tr.active: tr.emit("unlock.evictable", K.EVICTABLE, (node,), old=self.evictable_size_ - len(node.key), new=self.evictable_size_, protected=self.protected_size_, why="unlocked")
            node.lock_ref -= 1  # step: unlock.ref
            if node._snap is not None: invalidate(node)
            self._update_leaf_status(node)
            if tr.active: tr.emit("unlock.ref", K.REF, (node,), old=node.lock_ref + 1, new=node.lock_ref)
            node = node.parent
        if tr.active: tr.emit("unlock.result", K.RESULT, (), delta=delta)
        return delta  # step: unlock.result

    def evictable_size(self) -> int:
        return self.evictable_size_

    def protected_size(self) -> int:
        """Tokens on locked nodes: in use by a running request, so not evictable."""
        return self.protected_size_

    def total_size(self) -> int:
        # every node but the root is either locked or not
        return self.evictable_size_ + self.protected_size_

    # ------------------------------------------------------------------ helpers

    def _match_prefix_helper(self, node: TreeNode, key: tuple, extra_key: Hashable | None = None):
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
            self.evictable_leaves.refresh(child)  # its policy key moved (cache_candidates.py)
            if tr.active: tr.emit("match.touch", K.VISIT, (child,), time=access_time)
            prefix_len = self.key_match_fn(child.key, key)  # step: match.page_compare
            if tr.active: tr.emit("match.page_compare", K.COMPARE, (child,), common=prefix_len, page_size=self.page_size, pages=prefix_len // self.page_size)
            if prefix_len < len(child.key):
                new_node = self._split_node(child.key, child, prefix_len)
                value.append(new_node.value)  # step: match.take_split
                if tr.active: tr.emit("match.take_split", K.APPEND, (new_node,), slots=tuple(new_node.value.tolist()))
                node = new_node
                break
            else:
                value.append(child.value)  # step: match.take
                if tr.active: tr.emit("match.take", K.APPEND, (child,), slots=tuple(child.value.tolist()))
                node = child
                key = key[prefix_len:]

                if len(key):
                    child_key = self.get_child_key_fn(key, extra_key=extra_key)

        return value, node

    def _split_node(self, key: tuple, child: TreeNode, split_len: int) -> TreeNode:
        # new_node -> child: the new node takes the first split_len tokens; the old object
        # keeps the rest, so the locks and handles held on it stay valid. The new node
        # inherits the child's priority, hit count and locks (it is the shared prefix)
        invalidate(child)  # before the cut, while its old ancestors are still above it
        extra_key = child.extra_key  # both halves stay in the child's namespace
        new_node = self._new_node(priority=child.priority)
        new_node.extra_key = extra_key
        new_node.hit_count = child.hit_count
        new_node.children = {self.get_child_key_fn(key[split_len:], extra_key=extra_key): child}
        new_node.parent = child.parent
        new_node.lock_ref = child.lock_ref
        new_node.key = child.key[:split_len]
        new_node.value = child.value[:split_len].clone()
        child.parent = new_node
        child.key = child.key[split_len:]
        child.value = child.value[split_len:].clone()
        new_node.parent.children[self.get_child_key_fn(key, extra_key=extra_key)] = new_node  # step: split
        # hashes computed already are divided between the halves; none are computed here
        new_node.hash_value, child.hash_value = split_node_hash_value(
            child.hash_value, split_len, self.page_size)
        if self.tracer.active: self.tracer.emit("split", K.SPLIT, (new_node, child), at=split_len)
        return new_node

    def _insert_helper(self, node: TreeNode, key: tuple, value: torch.Tensor, priority: int | None = 0,
                       extra_key: Hashable | None = None) -> int:
        tr = self.tracer
        if priority is None:
            priority = 0
        access_time = self._tick()
        node.last_access_time = access_time  # step: insert.visit
        if node._snap is not None: invalidate(node)
        if tr.active: tr.emit("insert.visit", K.VISIT, (node,), time=access_time)
        # the priority along the path is the highest of the inserts through it
        self._raise_priority(node, priority)
        if len(key) == 0:
            return 0

        child_key = self.get_child_key_fn(key, extra_key=extra_key)

        total_prefix_length = 0
        while len(key) > 0 and child_key in node.children:
            node = node.children[child_key]
            node.last_access_time = access_time  # step: insert.touch
            if node._snap is not None: invalidate(node)
            if tr.active: tr.emit("insert.touch", K.VISIT, (node,), time=access_time)
            prefix_len = self.key_match_fn(node.key, key)  # step: insert.page_compare
            if tr.active: tr.emit("insert.page_compare", K.COMPARE, (node,), common=prefix_len, page_size=self.page_size, pages=prefix_len // self.page_size)
            total_prefix_length += prefix_len
            key = key[prefix_len:]
            value = value[prefix_len:]

            if prefix_len < len(node.key):
                self.evictable_leaves.refresh(node)  # the lower part keeps the new access time
                new_node = self._split_node(node.key, node, prefix_len)
                self._raise_priority(new_node, priority)
                self._inc_hit_count(new_node)
                node = new_node
            else:
                self._raise_priority(node, priority)
                self._inc_hit_count(node)
                self.evictable_leaves.refresh(node)  # its policy key moved
            if len(key):
                child_key = self.get_child_key_fn(key, extra_key=extra_key)

        if len(key):
            new_node = self._new_node(priority=priority)
            new_node.parent = node
            new_node.key = key
            new_node.extra_key = extra_key
            new_node.value = value.clone()  # its own tensor: a slice would keep the caller's alive
            new_node.hit_count = 1
            node.children[child_key] = new_node  # step: insert.create
            if node._snap is not None: invalidate(node)
            if tr.active: tr.emit("insert.create", K.CREATE, (new_node,), length=len(key), hit_count=1, priority=priority)
            self.evictable_size_ += len(key)  # step: insert.evictable
            if tr.active: tr.emit("insert.evictable", K.EVICTABLE, (new_node,), old=self.evictable_size_ - len(key), new=self.evictable_size_, why="created")
            self._update_leaf_status(node)
            self._update_leaf_status(new_node)
            self._record_store_event(new_node)  # step: kv.stored
        return total_prefix_length

    def _inc_hit_count(self, node: TreeNode) -> None:
        node.hit_count += 1  # step: insert.hit
        if node._snap is not None: invalidate(node)
        if self.tracer.active: self.tracer.emit("insert.hit", K.HIT, (node,), old=node.hit_count - 1, new=node.hit_count)

    def _raise_priority(self, node: TreeNode, priority: int) -> None:
        old = node.priority
        if priority > old:
            node.priority = priority  # step: insert.priority
            if node._snap is not None: invalidate(node)
            if self.tracer.active: self.tracer.emit("insert.priority", K.PRIORITY, (node,), old=old, new=priority)

    def _delete_leaf(self, node: TreeNode) -> None:
        tr = self.tracer
        parent = node.parent
        del parent.children[self.get_child_key_fn(node.key, extra_key=node.extra_key)]  # step: evict.delete
        if parent._snap is not None: invalidate(parent)
        if tr.active: tr.emit("evict.delete", K.DELETE, (parent,), leaf=node.id, key=node.key)
        self.evictable_size_ -= len(node.key)  # step: evict.evictable
        if tr.active: tr.emit("evict.evictable", K.EVICTABLE, (parent,), old=self.evictable_size_ + len(node.key), new=self.evictable_size_, why="deleted", leaf=node.id)
        self.evictable_leaves.remove(node, gone=True)
        self._update_leaf_status(parent)  # step: evict.push_parent
        if tr.active and parent in self.evictable_leaves: tr.emit("evict.push_parent", K.PUSH_PARENT, (parent,), key=self.eviction_strategy(parent))

    def _update_leaf_status(self, node: TreeNode) -> None:
        # a candidate for eviction: unlocked and childless (the root's lock keeps it out)
        if node.lock_ref > 0 or node.children:
            self.evictable_leaves.remove(node)
        else:
            self.evictable_leaves.add(node)

    def _tick(self) -> int:
        # where SGLang reads time.monotonic(): the next tick of a logical clock
        self._clock += 1
        return self._clock

    def _new_node(self, priority: int = 0) -> TreeNode:
        # two clock reads, as SGLang's node constructor makes: last access, then creation
        last_access = self._tick()
        node = TreeNode(self._next_id, last_access, self._tick(), priority)
        self._next_id += 1
        return node


_lock_ref = LOCK_REF  # a node's lock count, read in C (checks.py)
