"""A toy engine for the plug-in test: a trie with one token per node, evicting the least
recently used leaf first.

It is what a radix tree is before its edges are compressed: the same matches, one node per
token. It is here to show what a third engine needs and nothing more: a cache with
``match_prefix``, ``insert``, ``evict``, lock calls, sizes, ``snapshot`` and an observer; an
``Engine`` facade subclass; one ``register`` line (done by the test, so the app's own list of
engines stays as shipped).
"""
from __future__ import annotations

import torch

from radixviz.cache.contract import Matched
from radixviz.cache.engines import EngineSpec
from radixviz.cache.facade import Engine as Facade
from radixviz.cache.invariants import InvariantError, check_pool, node_label
from radixviz.cache.keys import as_key
from radixviz.cache.snapshot import MatchPreview, NodeSnapshot, TreeSnapshot, invalidate, snapshot_subtree
from radixviz.cache.trace import EventKind as K, Tracer
from radixviz.cache.values import as_value

SPEC = EngineSpec("toy", __name__, "a trie with one token per node (a test's toy)")


class Node:
    __slots__ = ("id", "key", "value", "children", "parent", "ref", "last_access_time", "_snap")

    def __init__(self, id: int, parent=None, key=(), value=None, time: int = 0):
        self.id, self.parent, self.key, self.value = id, parent, key, value
        self.children: dict = {}
        self.ref, self.last_access_time, self._snap = 0, time, None


class TrieCache:
    node_class = Node   # a toy built on this one may give its nodes more fields

    def __init__(self, device="cpu"):
        self.device = torch.device(device)
        self.tracer = Tracer(__name__, self.snapshot)
        self.reset()

    def reset(self) -> None:
        self.clock, self.next_id = 0, 1
        self.root_node = self.node_class(0, value=torch.empty(0, dtype=torch.int64))
        self.evictable = 0

    @property
    def observer(self):
        return self.tracer.observer

    @observer.setter
    def observer(self, callback) -> None:
        self.tracer.observer = callback

    def snapshot(self) -> TreeSnapshot:
        root = snapshot_subtree(self.root_node, lambda n, kids: NodeSnapshot(
            n.id, n.key, tuple(n.value.tolist()), n.ref, n.last_access_time, kids,
            len(n.key) + sum(k.subtree_tokens for k in kids)))
        return TreeSnapshot(root, self.evictable, self.clock, engine="toy")

    def match_prefix(self, key):
        key, node, self.clock = as_key(key), self.root_node, self.clock + 1
        self.tracer.op = "match_prefix"
        path = []
        for token in key:
            child = node.children.get(token)
            if child is None:
                break
            child.last_access_time = self.clock  # step: match.take
            invalidate(child)
            path.append(child.value)
            node = child
        slots = torch.cat(path) if path else torch.empty(0, dtype=torch.int64)
        if self.tracer.active: self.tracer.emit("match.result", K.RESULT, (node,), matched=len(slots), slots=tuple(slots.tolist()))
        return slots, node

    def insert(self, key, value=None) -> int:
        key = as_key(key)
        value = as_value(key, value, self.device)
        self.tracer.op = "insert"
        node, self.clock, held = self.root_node, self.clock + 1, 0
        for i, token in enumerate(key):
            child = node.children.get(token)
            if child is None:
                child = self.node_class(self.next_id, node, (token,), value[i:i + 1].clone(), self.clock)
                self.next_id += 1
                node.children[token] = child  # step: insert.create
                invalidate(node)
                self.evictable += 1
                if self.tracer.active: self.tracer.emit("insert.create", K.CREATE, (child,), length=1)
            else:
                held += 1
                child.last_access_time = self.clock
                invalidate(child)
            node = child
        if self.tracer.active: self.tracer.emit("insert.result", K.RESULT, (), prefix_len=held, length=len(key))
        return held

    def evict(self, num_tokens: int, evict_callback) -> int:
        self.tracer.op = "evict"
        evicted = 0
        while evicted < num_tokens:
            leaves = [n for n in self._nodes() if not n.children and n.ref == 0]
            if not leaves:
                break
            leaf = min(leaves, key=lambda n: (n.last_access_time, n.id))
            evict_callback(leaf.value)  # step: evict.free
            self._on_delete(leaf)
            del leaf.parent.children[leaf.key[0]]
            invalidate(leaf.parent)
            self.evictable -= 1
            evicted += 1
            if self.tracer.active: self.tracer.emit("evict.delete", K.DELETE, (leaf.parent,), leaf=leaf.id, key=leaf.key)
        if self.tracer.active: self.tracer.emit("evict.result", K.RESULT, (), evicted=evicted, target=num_tokens)
        return evicted

    def _on_delete(self, leaf) -> None:
        """A leaf is about to leave the tree (a toy with more memory frees its share)."""

    def lock(self, node, step: int) -> int:
        self.tracer.op = "lock" if step > 0 else "unlock"
        delta = 0
        while node is not self.root_node:
            if (node.ref == 0) if step > 0 else (node.ref == 1):
                delta -= step
            node.ref += step  # step: lock.ref
            invalidate(node)
            node = node.parent
        self.evictable += delta
        if self.tracer.active: self.tracer.emit("lock.result", K.RESULT, (), delta=delta)
        return delta

    def evictable_size(self) -> int:
        return self.evictable

    def total_size(self) -> int:
        return sum(1 for _ in self._nodes())

    def _nodes(self):
        stack = list(self.root_node.children.values())
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.children.values())


class Engine(Facade):
    def make_cache(self) -> TrieCache:
        return TrieCache(self.pool.device)

    def match_key(self, key, extra_key=None) -> Matched:
        return Matched(*self.cache.match_prefix(key))

    def insert_key(self, key, slots, priority, extra_key=None) -> int:
        return self.cache.insert(key, slots)

    def evict_backbone(self, num_tokens, release) -> None:
        self.cache.evict(num_tokens, release)

    def lock(self, node) -> int:
        return self.cache.lock(node, +1)

    def unlock(self, node) -> int:
        if node is not self.cache.root_node and node.ref <= sum(c.ref for c in node.children.values()):
            raise ValueError(f"node #{node.id} holds no lock of its own to release")
        return self.cache.lock(node, -1)

    def check_invariants(self, held=()) -> None:
        owner, evictable = {}, 0
        for node in self.cache._nodes():
            if len(node.key) != 1 or node.value.numel() != 1:
                raise InvariantError(f"{node_label(node)}: a trie node holds one token and one slot")
            evictable += node.ref == 0
            owner[int(node.value[0])] = node_label(node)
        if evictable != self.cache.evictable:
            raise InvariantError(f"evictable size {self.cache.evictable}, unlocked nodes {evictable}")
        check_pool(self.pool, owner, held)

    def preview(self, key, extra_key=None) -> MatchPreview:
        node, slots, path = self.cache.snapshot().root, [], []
        for token in as_key(key):
            node = node.child_for((token,))
            if node is None:
                break
            slots.extend(node.value)
            path.append((node.id, 1))
        return MatchPreview(len(slots), tuple(slots), tuple(path), None, path[-1][0] if path else 0)
