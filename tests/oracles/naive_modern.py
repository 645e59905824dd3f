"""A plain re-reading of SGLang's radix cache of March 2026, kept as reference and baseline.

Written from upstream ``mem_cache/radix_cache.py`` and ``evict_policy.py`` (commit
9fbe6800a) in their shape, not radixviz's: keys are lists sliced afresh at every node,
edges are compared token by token (or page slice by page slice), the evictable leaves are a
set, and each eviction heaps ``(policy key, node)`` pairs that fall back on the node's own
``<`` (access time) for ties. It shares no code with ``radixviz.cache``: tests run the two
side by side and ``bench/core.py`` times them.

The wall clock becomes a logical one read at the same places: one read per match and per
insert, two per node built. The tree walks that SGLang writes as loops are loops here too;
``structure()`` (for the tests) recurses.

To check a claim the engine relies on, ``check_ties=True`` (the tests' setting) makes eviction
assert that no two candidate leaves tie on the policy key: if they did, the order would
depend on the set's iteration order. SGLang has no such check, so the benchmark leaves it off.
"""
from __future__ import annotations

import heapq
import sys
from collections import defaultdict

import torch


class Clock:
    def __init__(self):
        self.now = 0

    def read(self) -> int:
        self.now += 1
        return self.now


class RefNode:
    def __init__(self, clock: Clock, number: int, priority: int = 0):
        self.children = defaultdict(lambda: None)
        self.parent = None
        self.key: list = None
        self.value = None
        self.lock_ref = 0
        self.last_access_time = clock.read()
        self.creation_time = clock.read()
        self.hit_count = 0
        self.priority = priority
        self.number = number

    def __lt__(self, other: "RefNode") -> bool:
        return self.last_access_time < other.last_access_time


def tokens_equal_prefix(edge: list, key: list) -> int:
    count = 0
    for a, b in zip(edge, key):
        if a != b:
            break
        count += 1
    return count


def pages_equal_prefix(edge: list, key: list, page_size: int) -> int:
    limit = min(len(edge), len(key))
    i = 0
    while i < limit:
        if edge[i:i + page_size] != key[i:i + page_size]:
            break
        i += page_size
    return i


def first_of(key: list, page_size: int):
    return key[0] if page_size == 1 else tuple(key[:page_size])


def policy_value(policy: str, node: RefNode):
    if policy == "lru":
        return node.last_access_time
    if policy == "lfu":
        return (node.hit_count, node.last_access_time)
    if policy == "fifo":
        return node.creation_time
    if policy == "mru":
        return -node.last_access_time
    if policy == "filo":
        return -node.creation_time
    if policy == "priority":
        return (node.priority, node.last_access_time)
    if policy == "slru":
        return (1 if node.hit_count >= 2 else 0, node.last_access_time)
    raise ValueError(f"Unknown eviction policy: {policy}")


class NaiveModernRadixCache:
    def __init__(self, page_size: int = 1, eviction_policy: str = "lru", check_ties: bool = False):
        self.page_size = page_size
        self.check_ties = check_ties  # tests turn it on; SGLang's evict has no such check
        self.eviction_policy = eviction_policy.lower()
        if self.eviction_policy not in ("lru", "lfu", "fifo", "mru", "filo", "priority", "slru"):
            raise ValueError(f"Unknown eviction policy: {eviction_policy}")
        self.evictable_leaves = set()
        self.reset()

    def reset(self):
        self.clock = Clock()
        self.numbers = 0
        self.root_node = self._node(priority=-sys.maxsize)
        self.root_node.key = []
        self.root_node.value = []
        self.root_node.lock_ref = 1
        self.evictable_size_ = 0
        self.protected_size_ = 0
        self.evictable_leaves.clear()

    def _node(self, priority=0) -> RefNode:
        self.numbers += 1
        return RefNode(self.clock, self.numbers, priority)

    def _match_len(self, edge, key):
        if self.page_size == 1:
            return tokens_equal_prefix(edge, key)
        return pages_equal_prefix(edge, key, self.page_size)

    # ------------------------------------------------------------------ public

    def match_prefix(self, key):
        key = list(key)
        if len(key) == 0:
            return torch.empty((0,), dtype=torch.int64), self.root_node
        if self.page_size != 1:
            key = key[:len(key) // self.page_size * self.page_size]
        if len(key) == 0:
            return torch.empty((0,), dtype=torch.int64), self.root_node
        value, last_node = self._match_prefix_helper(self.root_node, key)
        if value:
            return torch.cat(value), last_node
        return torch.empty((0,), dtype=torch.int64), last_node

    def insert(self, key, value=None, priority=0):
        key = list(key)
        if value is None:
            value = torch.tensor([t if isinstance(t, int) else ord(t) for t in key], dtype=torch.int64)
        return self._insert_helper(self.root_node, key, value, priority)

    def evict(self, num_tokens, evict_callback):
        leaves = list(self.evictable_leaves)
        heap = [(policy_value(self.eviction_policy, n), n) for n in leaves]
        if self.check_ties:
            keys = [entry[0] for entry in heap]
            assert len(set(keys)) == len(keys), f"two eviction candidates tie: {sorted(keys)}"
        heapq.heapify(heap)
        num_evicted = 0
        while num_evicted < num_tokens and len(heap):
            _, x = heapq.heappop(heap)
            evict_callback(x.value)
            num_evicted += len(x.value)
            self._delete_leaf(x)
            if len(x.parent.children) == 0 and x.parent.lock_ref == 0:
                heapq.heappush(heap, (policy_value(self.eviction_policy, x.parent), x.parent))
        return num_evicted

    def inc_lock_ref(self, node):
        delta = 0
        while node != self.root_node:
            if node.lock_ref == 0:
                self.evictable_size_ -= len(node.key)
                self.protected_size_ += len(node.key)
                delta -= len(node.key)
            node.lock_ref += 1
            self._update_leaf_status(node)
            node = node.parent
        return delta

    def dec_lock_ref(self, node):
        delta = 0
        while node != self.root_node:
            if node.lock_ref == 1:
                self.evictable_size_ += len(node.key)
                self.protected_size_ -= len(node.key)
                delta += len(node.key)
            node.lock_ref -= 1
            self._update_leaf_status(node)
            node = node.parent
        return delta

    def evictable_size(self):
        return self.evictable_size_

    def protected_size(self):
        return self.protected_size_

    def total_size(self):
        total, stack = 0, [self.root_node]
        while stack:
            node = stack.pop()
            total += len(node.value)
            stack.extend(node.children.values())
        return total

    # ------------------------------------------------------------------ helpers

    def _match_prefix_helper(self, node, key):
        access_time = self.clock.read()
        node.last_access_time = access_time
        child_key = first_of(key, self.page_size)
        value = []
        while len(key) > 0 and child_key in node.children.keys():
            child = node.children[child_key]
            child.last_access_time = access_time
            prefix_len = self._match_len(child.key, key)
            if prefix_len < len(child.key):
                new_node = self._split_node(child.key, child, prefix_len)
                value.append(new_node.value)
                node = new_node
                break
            value.append(child.value)
            node = child
            key = key[prefix_len:]
            if len(key):
                child_key = first_of(key, self.page_size)
        return value, node

    def _split_node(self, key, child, split_len):
        new_node = self._node(priority=child.priority)
        new_node.hit_count = child.hit_count
        new_node.children = defaultdict(lambda: None)
        new_node.children[first_of(key[split_len:], self.page_size)] = child
        new_node.parent = child.parent
        new_node.lock_ref = child.lock_ref
        new_node.key = child.key[:split_len]
        new_node.value = child.value[:split_len].clone()
        child.parent = new_node
        child.key = child.key[split_len:]
        child.value = child.value[split_len:].clone()
        new_node.parent.children[first_of(key, self.page_size)] = new_node
        return new_node

    def _insert_helper(self, node, key, value, priority=0):
        if priority is None:
            priority = 0
        access_time = self.clock.read()
        node.last_access_time = access_time
        node.priority = max(node.priority, priority)
        if len(key) == 0:
            return 0
        child_key = first_of(key, self.page_size)
        total_prefix_length = 0
        while len(key) > 0 and child_key in node.children.keys():
            node = node.children[child_key]
            node.last_access_time = access_time
            prefix_len = self._match_len(node.key, key)
            total_prefix_length += prefix_len
            key = key[prefix_len:]
            value = value[prefix_len:]
            if prefix_len < len(node.key):
                new_node = self._split_node(node.key, node, prefix_len)
                new_node.priority = max(new_node.priority, priority)
                new_node.hit_count += 1
                node = new_node
            else:
                node.priority = max(node.priority, priority)
                node.hit_count += 1
            if len(key):
                child_key = first_of(key, self.page_size)
        if len(key):
            new_node = self._node(priority=priority)
            new_node.parent = node
            new_node.key = key
            new_node.value = value.clone()
            new_node.hit_count += 1
            node.children[child_key] = new_node
            self.evictable_size_ += len(key)
            self._update_leaf_status(node)
            self._update_leaf_status(new_node)
        return total_prefix_length

    def _delete_leaf(self, node):
        removed = node.parent.children.pop(first_of(node.key, self.page_size), None)
        assert removed is node
        self.evictable_size_ -= len(node.key)
        self.evictable_leaves.discard(node)
        self._update_leaf_status(node.parent)

    def _update_leaf_status(self, node):
        if node.lock_ref > 0 or len(node.children) > 0:
            self.evictable_leaves.discard(node)
            return
        self.evictable_leaves.add(node)

    def structure(self, node=None) -> tuple:
        """The whole tree as nested tuples (edge, slots, lock, hits, priority, times, children)."""
        node = self.root_node if node is None else node
        value = node.value.tolist() if isinstance(node.value, torch.Tensor) else list(node.value)
        return (tuple(node.key), tuple(value), node.lock_ref, node.hit_count, node.priority,
                node.creation_time, node.last_access_time,
                tuple(self.structure(child) for child in node.children.values()))
