"""SGLang's first radix cache (commit 22085081bb), after the #7 matcher fix.

Public names and behaviour follow the release one for one; ``buggy_match=True`` brings back
the matcher as it was before #7. Five things differ, none of them visible in results:
time is a logical clock (each place the release read the wall clock takes the next tick),
recursion is written as loops, a node's children are found by the first token of their
edge (sibling edges never share one, so this is exactly the child the release's scan would
stop at; #364 later did the same), eviction takes its leaves from a heap that lasts
between calls instead of one built afresh each time (cache_heap.py: same leaves, same order), and
a match that takes one edge returns that edge's slots as they are, where the release
concatenated (copied) even one (SGLang still does): the same slots, without a copy the
simulation made two million times a run (the 2026 engine here does the same).

The line that does each step ends with ``# step: LABEL``; the ``if tr.active: tr.emit(...)``
line after it reports that step to an observer (trace.py), and ``invalidate(node)`` keeps
snapshots true. Neither changes what the algorithm does.
"""
from __future__ import annotations

import torch

from radixviz.cache.checks import REF_COUNTER, check_release
from radixviz.cache.keys import as_key, get_child_key, match, match_stops_here
from radixviz.cache.snapshot import ReleaseTreeSnapshot, invalidate, snapshot_node
from radixviz.cache.trace import EventKind as K, Tracer
from radixviz.cache.values import as_value
from .cache_heap import LeafHeap
from .node import TreeNode


class RadixCache:
    def __init__(self, disable: bool = False, buggy_match: bool = False, device: str | torch.device = "cpu",
                 strict: bool = True) -> None:
        """``strict=False`` accepts a value shorter than its key and keeps it, exactly as the
        release did when its scheduler inserted ``input + output`` with one slot fewer (#4):
        values are sliced by key positions, ``evictable_size`` grows by the value's length
        and shrinks by the key's when a leaf is deleted, so it drifts."""
        self.disable = disable
        self.buggy_match = buggy_match
        self.strict = strict
        self.short_values = False   # a value shorter than its key was taken (#4): the counter may drift
        self.device = torch.device(device)
        # the edge comparison a match makes (keys.match); a caller may wrap it, as SGLang's
        # later caches take a key_match_fn: the simulation remembers answers it asks again
        self.key_match = match
        self.tracer = Tracer(__name__, self.snapshot)
        self.reset()

    def reset(self) -> None:
        self._clock = 0
        self._next_id = 0
        self._leaves = LeafHeap()  # every leaf, least recently used first: eviction's order
        self.root_node = self._new_node()
        self.root_node.value = self._empty()
        # NOTE: the root holds one reference forever, so it is never evicted
        self.root_node.ref_counter = 1
        self._evictable = 0

    @property
    def observer(self):
        return self.tracer.observer

    @observer.setter
    def observer(self, callback) -> None:
        """Attach a callable that receives every micro-step as an Event (None detaches)."""
        self.tracer.observer = callback

    def snapshot(self) -> ReleaseTreeSnapshot:
        """An immutable picture of the whole tree as it is now."""
        return ReleaseTreeSnapshot(snapshot_node(self.root_node), self._evictable, self._clock, self.buggy_match,
                                   short_values=self.short_values)

    # ---------------------------------------------------------------- public API

    def match_prefix(self, key):
        """Return ``(slots, last_node)`` for the longest cached prefix of ``key``.

        May split a node: when the match stops inside an edge, the edge is cut there so
        that ``last_node`` covers exactly the matched tokens. The slots may be the tree's own
        tensor: read them, do not write to them.
        """
        key = as_key(key)
        if self.disable:
            return self._empty(), self.root_node
        tr = self.tracer
        tr.op = "match_prefix"
        value = []
        last_node = self._match_prefix_helper(self.root_node, key, value)
        if not last_node.children:
            self._leaves.note(last_node)  # a leaf just touched: its place in the LRU moved
        # one edge's slots come back as they are (the release concatenated even one)
        value = value[0] if len(value) == 1 else torch.cat(value) if value else self._empty()  # step: match.result
        if tr.active: tr.emit("match.result", K.RESULT, (last_node,), matched=len(value), slots=tuple(value.tolist()))
        return value, last_node

    def insert(self, key, value=None) -> int:
        """Insert ``key`` with its slots; return how many leading tokens were already held.

        The caller frees its own copy of those leading slots: the tree keeps the older ones.
        """
        key = as_key(key)
        value = as_value(key, value, self.device, shorter_ok=not self.strict)
        if not self.strict:  # only a lenient cache takes a value shorter than its key (#4)
            self.short_values |= len(value) < len(key)
        if self.disable:
            return len(key)
        tr = self.tracer
        tr.op = "insert"
        prefix_len = self._insert_helper(self.root_node, key, value)  # step: insert.result
        if tr.active: tr.emit("insert.result", K.RESULT, (), prefix_len=prefix_len, length=len(key))
        return prefix_len

    def evict(self, num_tokens: int, evict_callback) -> None:
        """Free at least ``num_tokens`` tokens from unreferenced leaves, oldest first.

        ``evict_callback(slots)`` releases a leaf's slots and returns how many it freed.
        Stops early when no unreferenced leaf is left.
        """
        if self.disable:
            raise RuntimeError("evict() is not available: the cache is disabled")
        tr = self.tracer
        tr.op = "evict"
        # the release heapified every leaf here; this heap already holds them all
        leaves = self._leaves  # step: evict.heap
        if tr.active: tr.emit("evict.heap", K.HEAP, tuple(leaves.leaves()), target=num_tokens)

        num_evicted = 0
        popped = []  # taken off the heap but still leaves: they go back when the call ends
        try:
            while num_evicted < num_tokens:  # step: evict.result
                x = leaves.pop()  # step: evict.pop
                if x is None:
                    break
                popped.append(x)
                if tr.active: tr.emit("evict.pop", K.POP, (x,), is_root=x is self.root_node)

                if x is self.root_node:
                    break
                if x.ref_counter > 0:  # step: evict.skip
                    if tr.active: tr.emit("evict.skip", K.SKIP, (x,), ref=x.ref_counter)
                    continue

                freed = evict_callback(x.value)  # step: evict.free
                num_evicted += freed
                if tr.active: tr.emit("evict.free", K.FREE, (x,), slots=tuple(x.value.tolist()), freed=int(freed))
                self._delete_leaf(x)
                popped.pop()

                if len(x.parent.children) == 0:
                    leaves.note(x.parent)  # step: evict.push_parent
                    if tr.active: tr.emit("evict.push_parent", K.PUSH_PARENT, (x.parent,))
        finally:
            for x in popped:
                leaves.note(x)
        if tr.active: tr.emit("evict.result", K.RESULT, (), evicted=int(num_evicted), target=num_tokens)

    def inc_ref_counter(self, node: TreeNode) -> int:
        """Lock the path from ``node`` to the root; return the change in evictable size (<= 0)."""
        self._check_attached(node)
        tr = self.tracer
        tr.op = "inc_ref_counter"
        delta = 0
        while node is not self.root_node:
            ref = node.ref_counter
            if ref == 0:
                old = self._evictable
                self._evictable -= len(node.value)  # step: lock.evictable
                if tr.active: tr.emit("lock.evictable", K.EVICTABLE, (node,), old=old, new=self._evictable, why="locked")
                delta -= len(node.value)
            node.ref_counter += 1  # step: lock.ref
            if node._snap is not None: invalidate(node)
            if tr.active: tr.emit("lock.ref", K.REF, (node,), old=ref, new=node.ref_counter)
            node = node.parent
        if tr.active: tr.emit("lock.result", K.RESULT, (), delta=delta)
        return delta  # step: lock.result

    def dec_ref_counter(self, node: TreeNode) -> int:
        """Release a lock taken by ``inc_ref_counter(node)``; return the change (>= 0)."""
        self._check_attached(node, releasing=True)
        tr = self.tracer
        tr.op = "dec_ref_counter"
        delta = 0
        while node is not self.root_node:
            ref = node.ref_counter
            if ref == 1:
                old = self._evictable
                self._evictable += len(node.value)  # step: unlock.evictable
                if tr.active: tr.emit("unlock.evictable", K.EVICTABLE, (node,), old=old, new=self._evictable, why="unlocked")
                delta += len(node.value)
            node.ref_counter -= 1  # step: unlock.ref
            if node._snap is not None: invalidate(node)
            if tr.active: tr.emit("unlock.ref", K.REF, (node,), old=ref, new=node.ref_counter)
            node = node.parent
        if tr.active: tr.emit("unlock.result", K.RESULT, (), delta=delta)
        return delta  # step: unlock.result

    def evictable_size(self) -> int:
        return self._evictable

    def total_size(self) -> int:
        total, stack = 0, [self.root_node]
        while stack:
            node = stack.pop()
            total += len(node.value)  # as the release counted: slots, not tokens (they differ after #4)
            stack.extend(node.children.values())
        return total

    def pretty_print(self) -> None:
        """Print each edge (length, first ten tokens, reference count), then the total."""
        stack = [(child, 0) for child in reversed(self.root_node.children.values())]
        while stack:
            node, indent = stack.pop()
            print(" " * indent, len(node.key), node.key[:10], f"r={node.ref_counter}")
            stack.extend((c, indent + 2) for c in reversed(node.children.values()))
        print(f"#tokens: {self.total_size()}")

    # ------------------------------------------------------------------ helpers

    def _match_prefix_helper(self, node, key, value):
        tr = self.tracer
        last_node = node
        start = 0  # key[:start] is matched so far
        while True:
            node.last_access_time = self._tick()  # step: match.visit
            if node._snap is not None: invalidate(node)
            if tr.active: tr.emit("match.visit", K.VISIT, (node,), at=start)
            child = node.children.get(get_child_key(key, start=start)) if start < len(key) else None
            if child is None:
                return last_node
            prefix_len = self.key_match(child.key, key, start)  # step: match.compare
            if tr.active: tr.emit("match.compare", K.COMPARE, (child,), at=start, common=prefix_len)

            if match_stops_here(prefix_len, len(child.key), len(key) - start, self.buggy_match):
                new_node = self._split_node(child, prefix_len)
                value.append(new_node.value)  # step: match.append_split
                if tr.active: tr.emit("match.append_split", K.APPEND, (new_node,), slots=tuple(new_node.value.tolist()), at=start)
                return new_node

            # before #7 only the matching part was taken, yet the walk went on below it
            value.append(child.value[:prefix_len] if self.buggy_match else child.value)  # step: match.append
            if tr.active: tr.emit("match.append", K.APPEND, (child,), slots=tuple(value[-1].tolist()), at=start, partial=prefix_len < len(child.key))
            last_node = node = child
            start += prefix_len

    def _split_node(self, child, split_len):
        invalidate(child)  # before the cut, while its old ancestors are still above it
        # parent -> new_node -> child; new_node takes the first split_len tokens
        new_node = self._new_node()
        new_node.key = child.key[:split_len]
        new_node.value = child.value[:split_len]
        new_node.parent = child.parent
        # every request passing through child also passes through new_node
        new_node.ref_counter = child.ref_counter
        new_node.children = {get_child_key(child.key, start=split_len): child}
        child.key = child.key[split_len:]
        child.value = child.value[split_len:]
        child.parent = new_node
        siblings = new_node.parent.children
        # re-added last, as the release's dict re-keyed it
        del siblings[get_child_key(new_node.key)]
        siblings[get_child_key(new_node.key)] = new_node  # step: split
        if self.tracer.active: self.tracer.emit("split", K.SPLIT, (new_node, child), at=split_len)
        return new_node

    def _insert_helper(self, node, key, value):
        tr = self.tracer
        held = 0  # tokens the tree already had
        while True:
            node.last_access_time = self._tick()  # step: insert.visit
            if node._snap is not None: invalidate(node)
            if tr.active: tr.emit("insert.visit", K.VISIT, (node,), at=held)
            child = node.children.get(get_child_key(key, start=held)) if held < len(key) else None
            if child is not None:
                prefix_len = match(child.key, key, held)  # step: insert.compare
                if tr.active: tr.emit("insert.compare", K.COMPARE, (child,), at=held, common=prefix_len)
                if prefix_len == len(child.key):
                    if prefix_len == len(key) - held:
                        return held + prefix_len  # all held; the release does not touch child here
                    held += prefix_len
                    node = child
                    continue
                node = self._split_node(child, prefix_len)
                held += prefix_len
                continue

            if held < len(key):
                new_node = self._new_node()
                new_node.parent = node
                new_node.key = key[held:]
                new_node.value = value[held:]
                node.children[get_child_key(new_node.key)] = new_node  # step: insert.create
                if node._snap is not None: invalidate(node)
                if tr.active: tr.emit("insert.create", K.CREATE, (new_node,), length=len(new_node.key))
                old = self._evictable
                self._evictable += len(new_node.value)  # step: insert.evictable
                if tr.active: tr.emit("insert.evictable", K.EVICTABLE, (new_node,), old=old, new=self._evictable, why="created")
            elif not node.children:
                self._leaves.note(node)  # an empty key on an empty tree touched the root, a leaf
            return held

    def _delete_leaf(self, node) -> None:
        tr = self.tracer
        parent = node.parent
        del parent.children[get_child_key(node.key)]  # step: evict.delete
        if parent._snap is not None: invalidate(parent)
        if tr.active: tr.emit("evict.delete", K.DELETE, (parent,), leaf=node.id, key=node.key)
        old = self._evictable
        self._evictable -= len(node.key)  # step: evict.evictable
        if tr.active: tr.emit("evict.evictable", K.EVICTABLE, (parent,), old=old, new=self._evictable, why="deleted", leaf=node.id)

    # ------------------------------------------------------------ plumbing

    def _tick(self) -> int:
        self._clock += 1
        return self._clock

    def _new_node(self) -> TreeNode:
        node = TreeNode(self._next_id, self._tick())
        self._next_id += 1
        self._leaves.note(node)  # a new leaf (a split's upper half is dropped when popped)
        return node

    def _empty(self) -> torch.Tensor:
        return torch.empty(0, dtype=torch.int64, device=self.device)

    def _check_attached(self, node, releasing: bool = False) -> None:
        """Refuse, before changing anything, a node not in this tree or a release of a lock
        the caller never took (checks.py)."""
        check_release(self, node, REF_COUNTER, releasing)
