"""SGLang's first radix cache (commit 22085081bb), after the #7 matcher fix.

Public names and behaviour follow the release one for one; ``buggy_match=True`` brings back
the matcher as it was before #7. Three things differ, none of them visible in results:
time is a logical clock (each place the release read the wall clock takes the next tick),
recursion is written as loops, and a node's children are found by the first token of their
edge (sibling edges never share one, so this is exactly the child the release's scan would
stop at; #364 later did the same). Lines ``if self._trace: self._emit(...)`` only report
the step above them to an observer; the observer, snapshots and events are ``Traced``
(trace.py), and eviction with nobody watching is ``UntracedEviction`` (leaf_heap.py).
"""
from __future__ import annotations

import heapq

import torch

from .keys import as_key, match
from .leaf_heap import LeafHeap, UntracedEviction
from .node import TreeNode
from .trace import EventKind as K, Traced


class RadixCache(Traced, UntracedEviction):
    def __init__(self, disable: bool = False, buggy_match: bool = False, device="cpu"):
        self.disable = disable
        self.buggy_match = buggy_match
        self.device = torch.device(device)
        self.reset()

    def reset(self) -> None:
        self._clock = 0
        self._next_id = 0
        self._leaves = LeafHeap()  # every leaf, for untraced evictions
        self.root_node = self._new_node()
        self.root_node.value = self._empty()
        # NOTE: the root holds one reference forever, so it is never evicted
        self.root_node.ref_counter = 1
        self._evictable = 0

    # ---------------------------------------------------------------- public API

    def match_prefix(self, key):
        """Return ``(slots, last_node)`` for the longest cached prefix of ``key``.

        May split a node: when the match stops inside an edge, the edge is cut there so
        that ``last_node`` covers exactly the matched tokens.
        """
        key = as_key(key)
        if self.disable:
            return self._empty(), self.root_node
        self._op = "match_prefix"
        value = []
        last_node = self._match_prefix_helper(self.root_node, key, value)
        if not last_node.children:
            self._leaves.note(last_node)  # a leaf just touched: its place in the LRU moved
        value = torch.cat(value) if value else self._empty()
        if self._trace: self._emit(K.RESULT, (last_node,), matched=len(value), slots=tuple(value.tolist()))
        return value, last_node

    def insert(self, key, value=None) -> int:
        """Insert ``key`` with its slots; return how many leading tokens were already held.

        The caller frees its own copy of those leading slots: the tree keeps the older ones.
        """
        key = as_key(key)
        value = self._as_value(key, value)
        if self.disable:
            return len(key)
        self._op = "insert"
        prefix_len = self._insert_helper(self.root_node, key, value)
        if self._trace: self._emit(K.RESULT, (), prefix_len=prefix_len, length=len(key))
        return prefix_len

    def evict(self, num_tokens: int, evict_callback) -> None:
        """Free at least ``num_tokens`` tokens from unreferenced leaves, oldest first.

        ``evict_callback(slots)`` releases a leaf's slots and returns how many it freed.
        Stops early when no unreferenced leaf is left.
        """
        if self.disable:
            raise RuntimeError("evict() is not available: the cache is disabled")
        if not self._trace:
            return self._evict_untraced(num_tokens, evict_callback)
        self._op = "evict"
        leaves = self._collect_leaves()
        heapq.heapify(leaves)
        if self._trace: self._emit(K.HEAP, tuple(leaves), target=num_tokens)

        num_evicted = 0
        while num_evicted < num_tokens and len(leaves):
            x = heapq.heappop(leaves)
            if self._trace: self._emit(K.POP, (x,), is_root=x is self.root_node)

            if x is self.root_node:
                break
            if x.ref_counter > 0:
                if self._trace: self._emit(K.SKIP, (x,), ref=x.ref_counter)
                continue

            freed = evict_callback(x.value)
            num_evicted += freed
            if self._trace: self._emit(K.FREE, (x,), slots=tuple(x.value.tolist()), freed=int(freed))
            self._delete_leaf(x)

            if len(x.parent.children) == 0:
                heapq.heappush(leaves, x.parent)
                if self._trace: self._emit(K.PUSH_PARENT, (x.parent,))
        if self._trace: self._emit(K.RESULT, (), evicted=int(num_evicted), target=num_tokens)

    def inc_ref_counter(self, node: TreeNode) -> int:
        """Lock the path from ``node`` to the root; return the change in evictable size (<= 0)."""
        self._check_attached(node)
        self._op = "inc_ref_counter"
        delta = 0
        while node is not self.root_node:
            if node.ref_counter == 0:
                self._evictable -= len(node.value)
                if self._trace: self._emit(K.EVICTABLE, (node,), old=self._evictable + len(node.value), new=self._evictable, why="locked")
                delta -= len(node.value)
            node.ref_counter += 1
            if self._trace: self._emit(K.REF, (node,), old=node.ref_counter - 1, new=node.ref_counter)
            node = node.parent
        if self._trace: self._emit(K.RESULT, (), delta=delta)
        return delta

    def dec_ref_counter(self, node: TreeNode) -> int:
        """Release a lock taken by ``inc_ref_counter(node)``; return the change (>= 0)."""
        self._check_attached(node, releasing=True)
        self._op = "dec_ref_counter"
        delta = 0
        while node is not self.root_node:
            if node.ref_counter == 1:
                self._evictable += len(node.value)
                if self._trace: self._emit(K.EVICTABLE, (node,), old=self._evictable - len(node.value), new=self._evictable, why="unlocked")
                delta += len(node.value)
            node.ref_counter -= 1
            if self._trace: self._emit(K.REF, (node,), old=node.ref_counter + 1, new=node.ref_counter)
            node = node.parent
        if self._trace: self._emit(K.RESULT, (), delta=delta)
        return delta

    def evictable_size(self) -> int:
        return self._evictable

    def total_size(self) -> int:
        total, stack = 0, [self.root_node]
        while stack:
            node = stack.pop()
            total += len(node.key)
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
        last_node = node
        start = 0  # key[:start] is matched so far
        while True:
            node.last_access_time = self._tick()
            if self._trace: self._emit(K.VISIT, (node,), at=start)
            child = node.children.get(key[start]) if start < len(key) else None
            if child is None:
                return last_node
            prefix_len = match(child.key, key, start)
            if self._trace: self._emit(K.COMPARE, (child,), at=start, common=prefix_len)

            if self.buggy_match:
                # before #7: split only when the query itself ends inside this edge
                stop_here = prefix_len == len(key) - start and prefix_len != len(child.key)
            else:
                stop_here = prefix_len < len(child.key)
            if stop_here:
                new_node = self._split_node(child, prefix_len)
                value.append(new_node.value)
                if self._trace: self._emit(K.APPEND, (new_node,), slots=tuple(new_node.value.tolist()), at=start)
                return new_node

            # before #7 only the matching part was taken, yet the walk went on below it
            value.append(child.value[:prefix_len] if self.buggy_match else child.value)
            if self._trace: self._emit(K.APPEND, (child,), slots=tuple(value[-1].tolist()), at=start, partial=prefix_len < len(child.key))
            last_node = node = child
            start += prefix_len

    def _split_node(self, child, split_len):
        # parent -> new_node -> child; new_node takes the first split_len tokens
        new_node = self._new_node()
        new_node.key = child.key[:split_len]
        new_node.value = child.value[:split_len]
        new_node.parent = child.parent
        # every request passing through child also passes through new_node
        new_node.ref_counter = child.ref_counter
        new_node.children = {child.key[split_len]: child}
        child.key = child.key[split_len:]
        child.value = child.value[split_len:]
        child.parent = new_node
        siblings = new_node.parent.children
        # re-added last, as the release's dict re-keyed it
        del siblings[new_node.key[0]]
        siblings[new_node.key[0]] = new_node
        if self._trace: self._emit(K.SPLIT, (new_node, child), at=split_len)
        return new_node

    def _insert_helper(self, node, key, value):
        held = 0  # tokens the tree already had
        while True:
            node.last_access_time = self._tick()
            if self._trace: self._emit(K.VISIT, (node,), at=held)
            child = node.children.get(key[held]) if held < len(key) else None
            if child is not None:
                prefix_len = match(child.key, key, held)
                if self._trace: self._emit(K.COMPARE, (child,), at=held, common=prefix_len)
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
                node.children[new_node.key[0]] = new_node
                if self._trace: self._emit(K.CREATE, (new_node,), length=len(new_node.key))
                self._evictable += len(new_node.value)
                if self._trace: self._emit(K.EVICTABLE, (new_node,), old=self._evictable - len(new_node.value), new=self._evictable, why="created")
            return held

    def _collect_leaves(self):
        leaves, stack = [], [self.root_node]
        while stack:
            node = stack.pop()
            if not node.children:
                leaves.append(node)
            stack.extend(reversed(node.children.values()))
        return leaves

    def _delete_leaf(self, node):
        del node.parent.children[node.key[0]]
        if self._trace: self._emit(K.DELETE, (node.parent,), leaf=node.id, key=node.key)
        self._evictable -= len(node.key)
        if self._trace: self._emit(K.EVICTABLE, (node.parent,), old=self._evictable + len(node.key), new=self._evictable, why="deleted", leaf=node.id)
        if not node.parent.children:
            self._leaves.note(node.parent)  # a parent left childless is now a leaf

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

    def _as_value(self, key, value) -> torch.Tensor:
        if value is None:
            # the release stored the tokens themselves when no slots were given
            try:
                value = [t if isinstance(t, int) else ord(t) for t in key]
            except TypeError:
                raise TypeError("insert() without value needs int or one-character tokens") from None
        if not isinstance(value, torch.Tensor):
            value = torch.tensor(list(value), dtype=torch.int64, device=self.device)
        if value.dim() != 1 or len(value) != len(key):
            raise ValueError(f"value must be 1-D with one slot per token: {len(key)} tokens, "
                             f"value of shape {tuple(value.shape)}")
        if value.dtype != torch.int64:
            if value.is_floating_point():
                raise TypeError("slot indices must be integers")
            value = value.to(torch.int64)
        return value

    def _check_attached(self, node, releasing=False) -> None:
        """Refuse, before changing anything, a node not in this tree or an unlock below zero."""
        current = node
        while current is not self.root_node:
            parent = current.parent
            if parent is None or not current.key or parent.children.get(current.key[0]) is not current:
                raise ValueError(f"node #{node.id} is not in this tree (evicted, or from another cache)")
            if releasing and current.ref_counter <= 0:
                raise ValueError(f"node #{current.id} has no reference to release")
            current = parent
