"""SGLang's radix cache as of March 2026 (upstream commit 9fbe6800a), GPU tier only.

What changed since the first release, and is reproduced here step for step:

- pages: with ``page_size`` > 1 a child is found by its first page, edges are compared a
  page at a time and a match key is cut to whole pages first (#4356);
- eviction is pluggable: seven policies, each a sort key on the unlocked leaves
  (evict_policy.py); the callback runs once per evicted node, in pop order;
- ``ref_counter`` became ``lock_ref``, and the cache keeps a protected (locked) size beside
  the evictable one;
- nodes carry ``hit_count`` (raised by inserts only), ``priority`` (the max of the inserts
  through them) and ``creation_time``; time comes from a monotonic clock (#6211).

Time is a logical clock here: each place SGLang reads ``time.monotonic()`` takes the next
tick. That is once per match and once per insert (every node on the path, the root too,
gets that one time) and twice per node built (last access, then creation), so after an
insert splits an edge the new leaf is strictly newer than the old lower part beside it.

The line that does each step ends with ``# step: LABEL``; the ``if tr.active: tr.emit(...)``
after it reports the step to an observer (trace.py) and costs one attribute test when nobody
watches. Snapshots for views are invalidated at each change, traced or not.

Left out: the host-memory tier, KV events, bigram (EAGLE) keys, extra keys and chunked
inserts. One addition: ``insert`` refuses a key that is not whole pages with ValueError
(SGLang trusts its callers to align), and ``dec_lock_ref`` refuses to go below zero.
"""
from __future__ import annotations

import sys

import torch

from .evict_policy import eviction_key
from .keys import as_key, first_difference, match
from .modern_candidates import CandidateHeap
from .modern_checks import check_attached
from .modern_edges import holds_edge
from .values import as_value
from .modern_node import ModernTreeNode
from .modern_snapshot import ModernTreeSnapshot, snapshot_modern_node
from .snapshot import invalidate
from .trace import EventKind as K, Tracer


class ModernRadixCache:
    buggy_match = False  # the #7 switch is the 2024 engine's; today's matcher splits as #7 does

    def __init__(self, page_size: int = 1, eviction_policy: str = "lru", device="cpu"):
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise ValueError(f"page_size must be a whole number >= 1, not {page_size!r}")
        self.page_size = page_size
        self._policy_key = eviction_key(eviction_policy)
        self.eviction_policy = str(eviction_policy).lower()
        self.device = torch.device(device)
        self.tracer = Tracer(__name__, self.snapshot)
        self.reset()

    def reset(self) -> None:
        self._clock = 0
        self._next_id = 0
        # unlocked childless nodes, the eviction candidates, ordered by the policy's key
        self._leaves = CandidateHeap(self._policy_key)
        # the root starts at the lowest priority, so any insert's priority replaces it
        self.root_node = self._new_node(priority=-sys.maxsize)
        self.root_node.value = self.root_node.path_value = self._empty()
        self.root_node.lock_ref = 1  # never unlocked, so never evicted
        self._evictable = 0
        self._protected = 0

    @property
    def observer(self):
        return self.tracer.observer

    @observer.setter
    def observer(self, callback) -> None:
        """Attach a callable that receives every micro-step as an Event (None detaches)."""
        self.tracer.observer = callback

    def snapshot(self) -> ModernTreeSnapshot:
        """An immutable picture of the whole tree as it is now."""
        return ModernTreeSnapshot(snapshot_modern_node(self.root_node), self._evictable, self._clock,
                                  False, self._protected, self.page_size, self.eviction_policy)

    # ---------------------------------------------------------------- public API

    def match_prefix(self, key):
        """``(slots, last_node)`` for the longest cached prefix of ``key`` in whole pages.

        ``slots`` is a 1-D int64 tensor the tree keeps for ``last_node``: read-only.
        When the match stops inside an edge, the edge is split there so that ``last_node``
        covers exactly the matched tokens. A key shorter than a page touches nothing.
        """
        # a scheduler matches every waiting request every round, so this walk is the hot
        # path: no tensor is made here, the key is never copied whole, helpers are inlined
        if type(key) is not tuple:
            key = as_key(key)
        tr = self.tracer
        tr.op = "match_prefix"
        page = self.page_size
        usable = len(key) - len(key) % page  # step: match.page_cut
        if tr.active and usable < len(key): tr.emit("match.page_cut", K.PAGE_CUT, (), kept=usable, dropped=tuple(key[usable:]), page_size=page)
        node = self.root_node
        if usable == 0:
            if tr.active: tr.emit("match.result", K.RESULT, (node,), matched=0, slots=())
            return node.path_value, node
        self._clock = now = self._clock + 1
        node.last_access_time = now  # step: match.visit
        if node._snap is not None: invalidate(node)
        if tr.active: tr.emit("match.visit", K.VISIT, (node,), at=0, time=now)
        start, candidates = 0, self._leaves.members
        while start < usable:
            child = node.children.get(key[start] if page == 1 else key[start:start + page])
            if child is None:
                break
            child.last_access_time = now  # step: match.touch
            if child._snap is not None: invalidate(child)
            if child in candidates:
                self._leaves.add(child)  # its policy key moved
            if tr.active: tr.emit("match.touch", K.VISIT, (child,), at=start, time=now)
            edge = child.key
            common = len(edge)
            if start + common > usable:
                common = match(edge, key, start, usable)  # the key ends inside this edge
            elif not holds_edge(child, key, start):
                common = first_difference(edge, key, start, common)  # they part inside it
            if page > 1:
                common -= common % page  # step: match.page_compare
            if tr.active: tr.emit("match.page_compare", K.COMPARE, (child,), at=start, common=common, page_size=page, pages=common // page)
            if common < len(edge):
                node = self._split_node(child, common)  # step: match.take_split
                if tr.active: tr.emit("match.take_split", K.APPEND, (node,), slots=tuple(node.value.tolist()), at=start)
                break
            node = child  # step: match.take
            if tr.active: tr.emit("match.take", K.APPEND, (node,), slots=tuple(node.value.tolist()), at=start)
            start += common
        # the path's slots in one tensor, shared with the tree: read it, do not write to it
        slots = node.path_value  # step: match.result
        if tr.active: tr.emit("match.result", K.RESULT, (node,), matched=len(slots), slots=tuple(slots.tolist()))
        return slots, node

    def insert(self, key, value=None, priority: int = 0) -> int:
        """Insert ``key`` (whole pages) with its slots; return how many leading tokens the
        tree already held (the caller frees its own copies of those)."""
        if type(key) is not tuple:
            key = as_key(key)
        page = self.page_size
        if len(key) % page:
            raise ValueError(f"insert needs whole pages: {len(key)} tokens is not a multiple "
                             f"of page size {page}")
        if type(value) is not torch.Tensor or value.dtype != torch.int64 or value.dim() != 1 \
                or value.shape[0] != len(key):
            value = as_value(key, value, self.device)  # converts, or refuses before any change
        priority = 0 if priority is None else int(priority)
        tr = self.tracer
        tr.op = "insert"
        self._clock = now = self._clock + 1
        node = self.root_node
        node.last_access_time = now  # step: insert.visit
        if node._snap is not None: invalidate(node)
        if tr.active: tr.emit("insert.visit", K.VISIT, (node,), at=0, time=now)
        if priority > node.priority: self._raise_priority(node, priority)
        start, end, candidates = 0, len(key), self._leaves.members
        while start < end:
            child = node.children.get(key[start] if page == 1 else key[start:start + page])
            if child is None:
                break
            child.last_access_time = now  # step: insert.touch
            if child._snap is not None: invalidate(child)
            if tr.active: tr.emit("insert.touch", K.VISIT, (child,), at=start, time=now)
            edge = child.key
            common = len(edge)
            if start + common > end:
                common = match(edge, key, start)  # the key ends inside this edge
            elif key[start:start + common] != edge:
                common = first_difference(edge, key, start, common)  # they part inside it
            if page > 1:
                common -= common % page  # step: insert.page_compare
            if tr.active: tr.emit("insert.page_compare", K.COMPARE, (child,), at=start, common=common, page_size=page, pages=common // page)
            start += common
            node = self._split_node(child, common) if common < len(edge) else child
            if priority > node.priority: self._raise_priority(node, priority)
            node.hit_count += 1  # step: insert.hit
            if node._snap is not None: invalidate(node)
            if tr.active: tr.emit("insert.hit", K.HIT, (node,), old=node.hit_count - 1, new=node.hit_count)
            if child in candidates:
                self._leaves.add(child)  # its policy key moved
        if start < end:
            self._add_leaf(node, key, value, start, priority)
        if tr.active: tr.emit("insert.result", K.RESULT, (), prefix_len=start, length=len(key))
        return start  # step: insert.result

    def evict(self, num_tokens: int, evict_callback) -> int:
        """Evict unlocked leaves, smallest policy key first, until ``num_tokens`` tokens are
        gone or none is left; ``evict_callback(slots)`` frees each one. Returns tokens evicted."""
        tr = self.tracer
        tr.op = "evict"
        # SGLang heaps every candidate afresh here; the lasting heap pops the same nodes in
        # the same order (modern_candidates.py)
        leaves = self._leaves  # step: evict.heap
        if tr.active: self._emit_heap(num_tokens)
        evicted = 0
        while evicted < num_tokens:  # step: evict.result
            leaf = leaves.pop()  # step: evict.pop
            if leaf is None:
                break
            if tr.active: tr.emit("evict.pop", K.POP, (leaf,), key=self._policy_key(leaf), policy=self.eviction_policy, is_root=False)
            evict_callback(leaf.value)  # step: evict.free
            evicted += len(leaf.key)
            if tr.active: tr.emit("evict.free", K.FREE, (leaf,), slots=tuple(leaf.value.tolist()), freed=len(leaf.key))
            self._delete_leaf(leaf)
        if tr.active: tr.emit("evict.result", K.RESULT, (), evicted=evicted, target=num_tokens)
        return evicted

    def inc_lock_ref(self, node: ModernTreeNode) -> int:
        """Lock the path from ``node`` up to the root; return the change in evictable size (<= 0)."""
        check_attached(self, node)
        tr = self.tracer
        tr.op = "inc_lock_ref"
        delta, root, candidates = 0, self.root_node, self._leaves.members
        while node is not root:
            if node.lock_ref == 0:
                self._evictable -= len(node.key)  # step: lock.evictable
                self._protected += len(node.key)
                delta -= len(node.key)
                if tr.active: tr.emit("lock.evictable", K.EVICTABLE, (node,), old=self._evictable + len(node.key), new=self._evictable, protected=self._protected, why="locked")
            node.lock_ref += 1  # step: lock.ref
            if node._snap is not None: invalidate(node)
            candidates.pop(node, None)  # locked: no longer a candidate
            if tr.active: tr.emit("lock.ref", K.REF, (node,), old=node.lock_ref - 1, new=node.lock_ref)
            node = node.parent
        if tr.active: tr.emit("lock.result", K.RESULT, (), delta=delta)
        return delta  # step: lock.result

    def dec_lock_ref(self, node: ModernTreeNode) -> int:
        """Release a lock taken by ``inc_lock_ref(node)``; return the change (>= 0)."""
        check_attached(self, node, releasing=True)
        tr = self.tracer
        tr.op = "dec_lock_ref"
        delta, root = 0, self.root_node
        while node is not root:
            if node.lock_ref == 1:
                self._evictable += len(node.key)  # step: unlock.evictable
                self._protected -= len(node.key)
                delta += len(node.key)
                if tr.active: tr.emit("unlock.evictable", K.EVICTABLE, (node,), old=self._evictable - len(node.key), new=self._evictable, protected=self._protected, why="unlocked")
            node.lock_ref -= 1  # step: unlock.ref
            if node._snap is not None: invalidate(node)
            if node.lock_ref == 0 and not node.children:
                self._leaves.add(node)  # unlocked and childless: a candidate again
            if tr.active: tr.emit("unlock.ref", K.REF, (node,), old=node.lock_ref + 1, new=node.lock_ref)
            node = node.parent
        if tr.active: tr.emit("unlock.result", K.RESULT, (), delta=delta)
        return delta  # step: unlock.result

    def set_eviction_policy(self, policy: str) -> None:
        """Order the eviction candidates by ``policy`` from now on. SGLang fixes the policy at
        start-up; radixviz lets a lesson evict one tree several ways."""
        key_of = eviction_key(policy)
        candidates = list(self._leaves)
        self._policy_key, self.eviction_policy = key_of, str(policy).lower()
        self._leaves = CandidateHeap(key_of)
        for node in candidates:
            self._leaves.add(node)

    def evictable_size(self) -> int:
        return self._evictable

    def protected_size(self) -> int:
        """Tokens on locked nodes: in use by a running request, so not evictable."""
        return self._protected

    def total_size(self) -> int:
        # every node but the root is either locked or not
        return self._evictable + self._protected

    # ------------------------------------------------------------------ helpers

    def _child_key(self, key: tuple, start: int):
        # children are filed under their first token, or their first page when pages are larger
        if self.page_size == 1:
            return key[start]
        return key[start:start + self.page_size]

    def _raise_priority(self, node: ModernTreeNode, priority: int) -> None:
        old = node.priority
        if priority > old:
            node.priority = priority  # step: insert.priority
            invalidate(node)
            if self.tracer.active: self.tracer.emit("insert.priority", K.PRIORITY, (node,), old=old, new=priority)

    def _add_leaf(self, node, key, value, start: int, priority: int) -> None:
        tr = self.tracer
        leaf = self._new_node(priority)
        leaf.parent = node
        leaf.key = key[start:]
        # ``node`` covers exactly the first ``start`` tokens, so its path holds ``start`` slots
        leaf.path_value = torch.cat((node.path_value, value[start:]))
        leaf.value = leaf.path_value[start:]
        leaf.hit_count = 1
        node.children[key[start] if self.page_size == 1 else key[start:start + self.page_size]] = leaf  # step: insert.create
        if node._snap is not None: invalidate(node)
        if tr.active: tr.emit("insert.create", K.CREATE, (leaf,), length=len(leaf.key), hit_count=1, priority=priority)
        self._evictable += len(leaf.key)  # step: insert.evictable
        self._leaves.remove(node)  # it has a child now
        self._leaves.add(leaf)  # unlocked and childless
        if tr.active: tr.emit("insert.evictable", K.EVICTABLE, (leaf,), old=self._evictable - len(leaf.key), new=self._evictable, why="created")

    def _split_node(self, child: ModernTreeNode, split_len: int) -> ModernTreeNode:
        # parent -> upper -> child: the existing object keeps the lower part, so locks and
        # handles held on it stay valid; the upper part is a new node with fresh times
        invalidate(child)  # before the cut, while its old ancestors are still above it
        upper = self._new_node(child.priority)
        upper.hit_count = child.hit_count
        upper.lock_ref = child.lock_ref
        upper.parent = child.parent
        upper.key = child.key[:split_len]
        upper.value = child.value[:split_len]
        upper.path_value = child.path_value[:len(child.parent.path_value) + split_len]
        upper.children = {self._child_key(child.key, split_len): child}
        child.key = child.key[split_len:]
        child.value = child.value[split_len:]
        child.seen_keys = None  # another edge at another depth: what it remembered is void
        child.parent = upper
        # the same first token/page as before, so the parent's entry is replaced in place
        upper.parent.children[self._child_key(upper.key, 0)] = upper  # step: split
        if self.tracer.active: self.tracer.emit("split", K.SPLIT, (upper, child), at=split_len)
        return upper

    def _delete_leaf(self, leaf: ModernTreeNode) -> None:
        tr = self.tracer
        parent = leaf.parent
        del parent.children[leaf.key[0] if self.page_size == 1 else leaf.key[:self.page_size]]  # step: evict.delete
        if parent._snap is not None: invalidate(parent)
        if tr.active: tr.emit("evict.delete", K.DELETE, (parent,), leaf=leaf.id, key=leaf.key)
        self._evictable -= len(leaf.key)  # step: evict.evictable
        if tr.active: tr.emit("evict.evictable", K.EVICTABLE, (parent,), old=self._evictable + len(leaf.key), new=self._evictable, why="deleted", leaf=leaf.id)
        self._leaves.remove(leaf, gone=True)
        self._update_leaf_status(parent)  # step: evict.push_parent
        if tr.active and parent in self._leaves: tr.emit("evict.push_parent", K.PUSH_PARENT, (parent,), key=self._policy_key(parent))

    def _update_leaf_status(self, node: ModernTreeNode) -> None:
        if node.lock_ref > 0 or node.children:
            self._leaves.remove(node)
        else:
            self._leaves.add(node)

    def _emit_heap(self, num_tokens: int) -> None:
        """The candidates in pop order with the policy's key of each: the heap SGLang builds."""
        key_of = self._policy_key
        ranked = sorted(self._leaves, key=key_of)
        self.tracer.emit("evict.heap", K.HEAP, tuple(ranked), policy=self.eviction_policy, target=num_tokens,
                         keys=tuple((n.id, key_of(n)) for n in ranked))

    def _new_node(self, priority: int = 0) -> ModernTreeNode:
        # two clock reads, as SGLang's node constructor makes: last access, then creation
        last_access = self._clock + 1
        self._clock = created = last_access + 1
        node = ModernTreeNode(self._next_id, last_access, created, priority)
        self._next_id += 1
        return node

    def _empty(self) -> torch.Tensor:
        return torch.empty(0, dtype=torch.int64, device=self.device)
