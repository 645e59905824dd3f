"""A plain re-reading of SGLang's radix cache of March 2026, kept as reference and baseline.

Written from upstream ``mem_cache/radix_cache.py``, ``evict_policy.py`` and the hash function
of ``hicache_storage.py`` (commit 9fbe6800a) in their shape, not radixviz's: keys are lists
sliced afresh at every node, each carrying its namespace (``extra_key``) beside it as
upstream's ``RadixKey`` does, every edge comparison checks the two namespaces agree,
edges are compared token by token (or page slice by page slice), the evictable leaves are a
set, and each eviction heaps ``(policy key, node)`` pairs that fall back on the node's own
``<`` (access time) for ties. It shares no code with ``radixviz.cache``: tests run the two
side by side and ``bench/core.py`` times them.

With ``enable_kv_cache_events`` a created node's page hashes are computed and one "stored"
event a page is queued (as plain dicts), an evicted node queues one "removed" a page, a reset
"cleared"; ``take_events`` hands them over.

The wall clock becomes a logical one read at the same places: one read per match and per
insert, two per node built. The tree walks that SGLang writes as loops are loops here too;
``structure()`` (for the tests) recurses.

To check a claim the engine relies on, ``check_ties=True`` (the tests' setting) makes eviction
assert that no two candidate leaves tie on the policy key: if they did, the order would
depend on the set's iteration order. SGLang has no such check, so the benchmark leaves it off.
"""
from __future__ import annotations

import hashlib
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
        self.extra_key = None
        self.hash_value = None

    def __lt__(self, other: RefNode) -> bool:
        return self.last_access_time < other.last_access_time


def check_extra_key(a, b) -> None:
    if a != b:
        raise ValueError(f"key match across namespaces: {a!r} != {b!r}")


def sha256_page(tokens: list, prior_hash) -> str:
    hasher = hashlib.sha256()
    if prior_hash:
        hasher.update(bytes.fromhex(prior_hash))
    for t in tokens:
        tid = t if isinstance(t, int) else ord(t)
        hasher.update(tid.to_bytes(4, byteorder="little", signed=False))
    return hasher.hexdigest()


def hash_to_int64(hash_str: str) -> int:
    value = int(hash_str[:16], 16)
    if value >= 2 ** 63:
        return value - 2 ** 64
    return value


def node_hash_values(node, page_size: int) -> list:
    hash_values = []
    parent_hash = None
    if node.parent is not None and node.parent.hash_value is not None:
        if len(node.parent.key) > 0 and len(node.parent.hash_value) > 0:
            parent_hash = node.parent.hash_value[-1]
    for start in range(0, len(node.key), page_size):
        page_tokens = node.key[start:start + page_size]
        if not page_tokens:
            continue
        hash_val = sha256_page(page_tokens, parent_hash)
        hash_values.append(hash_val)
        parent_hash = hash_val
    return hash_values


def split_hash_value(hash_value, split_len: int, page_size: int):
    if hash_value is None:
        return None, None
    split_pages = split_len if page_size == 1 else split_len // page_size
    return hash_value[:split_pages], hash_value[split_pages:]


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


def first_of(key: list, page_size: int, extra_key=None):
    plain = key[0] if page_size == 1 else tuple(key[:page_size])
    if extra_key is None:
        return plain
    return (extra_key, plain)


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
    def __init__(self, page_size: int = 1, eviction_policy: str = "lru", check_ties: bool = False,
                 enable_kv_cache_events: bool = False):
        self.page_size = page_size
        self.enable_kv_cache_events = enable_kv_cache_events
        self.kv_event_queue = []
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
        self.root_node.hash_value = []
        self.evictable_size_ = 0
        self.protected_size_ = 0
        self.evictable_leaves.clear()
        if self.enable_kv_cache_events:
            self.kv_event_queue.append({"kind": "cleared"})

    def _node(self, priority=0) -> RefNode:
        self.numbers += 1
        return RefNode(self.clock, self.numbers, priority)

    def _match_len(self, edge, key, edge_extra_key=None, key_extra_key=None):
        check_extra_key(edge_extra_key, key_extra_key)
        if self.page_size == 1:
            return tokens_equal_prefix(edge, key)
        return pages_equal_prefix(edge, key, self.page_size)

    # ------------------------------------------------------------------ public

    def match_prefix(self, key, extra_key=None):
        key = list(key)
        if len(key) == 0:
            return torch.empty((0,), dtype=torch.int64), self.root_node
        if self.page_size != 1:
            key = key[:len(key) // self.page_size * self.page_size]
        if len(key) == 0:
            return torch.empty((0,), dtype=torch.int64), self.root_node
        value, last_node = self._match_prefix_helper(self.root_node, key, extra_key)
        if value:
            return torch.cat(value), last_node
        return torch.empty((0,), dtype=torch.int64), last_node

    def insert(self, key, value=None, priority=0, extra_key=None):
        key = list(key)
        if value is None:
            value = torch.tensor([t if isinstance(t, int) else ord(t) for t in key], dtype=torch.int64)
        return self._insert_helper(self.root_node, key, value, priority, extra_key)

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
            self._record_remove_event(x)
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

    def take_events(self):
        if not self.enable_kv_cache_events:
            return []
        events = self.kv_event_queue
        self.kv_event_queue = []
        return events

    def _match_prefix_helper(self, node, key, extra_key=None):
        access_time = self.clock.read()
        node.last_access_time = access_time
        child_key = first_of(key, self.page_size, extra_key)
        value = []
        while len(key) > 0 and child_key in node.children:
            child = node.children[child_key]
            child.last_access_time = access_time
            prefix_len = self._match_len(child.key, key, child.extra_key, extra_key)
            if prefix_len < len(child.key):
                new_node = self._split_node(child.key, child, prefix_len)
                value.append(new_node.value)
                node = new_node
                break
            value.append(child.value)
            node = child
            key = key[prefix_len:]
            if len(key):
                child_key = first_of(key, self.page_size, extra_key)
        return value, node

    def _split_node(self, key, child, split_len):
        extra_key = child.extra_key
        new_node = self._node(priority=child.priority)
        new_node.extra_key = extra_key
        new_node.hit_count = child.hit_count
        new_node.children = defaultdict(lambda: None)
        new_node.children[first_of(key[split_len:], self.page_size, extra_key)] = child
        new_node.parent = child.parent
        new_node.lock_ref = child.lock_ref
        new_node.key = child.key[:split_len]
        new_node.value = child.value[:split_len].clone()
        child.parent = new_node
        child.key = child.key[split_len:]
        child.value = child.value[split_len:].clone()
        new_node.parent.children[first_of(key, self.page_size, extra_key)] = new_node
        new_node.hash_value, child.hash_value = split_hash_value(child.hash_value, split_len, self.page_size)
        return new_node

    def _insert_helper(self, node, key, value, priority=0, extra_key=None):
        if priority is None:
            priority = 0
        access_time = self.clock.read()
        node.last_access_time = access_time
        node.priority = max(node.priority, priority)
        if len(key) == 0:
            return 0
        child_key = first_of(key, self.page_size, extra_key)
        total_prefix_length = 0
        while len(key) > 0 and child_key in node.children:
            node = node.children[child_key]
            node.last_access_time = access_time
            prefix_len = self._match_len(node.key, key, node.extra_key, extra_key)
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
                child_key = first_of(key, self.page_size, extra_key)
        if len(key):
            new_node = self._node(priority=priority)
            new_node.parent = node
            new_node.key = key
            new_node.extra_key = extra_key
            new_node.value = value.clone()
            new_node.hit_count += 1
            node.children[child_key] = new_node
            self.evictable_size_ += len(key)
            self._update_leaf_status(node)
            self._update_leaf_status(new_node)
            self._record_store_event(new_node)
        return total_prefix_length

    def _record_store_event(self, node):
        if not self.enable_kv_cache_events:
            return
        if node.hash_value is None:
            node.hash_value = node_hash_values(node, self.page_size)
        parent_block_hash = None
        if node.parent is not None and node.parent != self.root_node:
            if node.parent.hash_value is not None and len(node.parent.hash_value) > 0:
                parent_block_hash = hash_to_int64(node.parent.hash_value[-1])
        page_index = 0
        for start in range(0, len(node.key), self.page_size):
            page_tokens = node.key[start:start + self.page_size]
            if not page_tokens:
                continue
            block_hash = hash_to_int64(node.hash_value[page_index])
            self.kv_event_queue.append({
                "kind": "stored", "block_hashes": [block_hash], "parent_block_hash": parent_block_hash,
                "token_ids": page_tokens, "block_size": len(page_tokens), "lora_id": None, "medium": "GPU"})
            parent_block_hash = block_hash
            page_index += 1

    def _record_remove_event(self, node):
        if not self.enable_kv_cache_events:
            return
        if node.hash_value is None:
            node.hash_value = node_hash_values(node, self.page_size)
        page_index = 0
        for start in range(0, len(node.key), self.page_size):
            if not node.key[start:start + self.page_size]:
                continue
            block_hash = hash_to_int64(node.hash_value[page_index])
            self.kv_event_queue.append({"kind": "removed", "block_hashes": [block_hash], "medium": "GPU"})
            page_index += 1

    def _delete_leaf(self, node):
        removed = node.parent.children.pop(first_of(node.key, self.page_size, node.extra_key), None)
        assert removed is node
        self.evictable_size_ -= len(node.key)
        self.evictable_leaves.discard(node)
        self._update_leaf_status(node.parent)

    def _update_leaf_status(self, node):
        if node.lock_ref > 0 or len(node.children) > 0:
            self.evictable_leaves.discard(node)
            return
        self.evictable_leaves.add(node)

    def structure(self, node=None, with_keys: bool = False) -> tuple:
        """The whole tree as nested tuples (edge, slots, lock, hits, priority, times, children);
        ``with_keys`` adds each node's namespace, page hashes and the key its parent files it
        under (children in the order they were filed)."""
        node = self.root_node if node is None else node
        value = node.value.tolist() if isinstance(node.value, torch.Tensor) else list(node.value)
        head = (tuple(node.key), tuple(value), node.lock_ref, node.hit_count, node.priority,
                node.creation_time, node.last_access_time)
        if with_keys:
            hashes = None if node.hash_value is None else tuple(node.hash_value)
            head += (node.extra_key, hashes)
            return head + (tuple((filed, self.structure(child, True))
                                 for filed, child in node.children.items()),)
        return head + (tuple(self.structure(child) for child in node.children.values()),)
