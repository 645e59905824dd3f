"""The cache-aware router's approximate tree: one radix tree of the prompts it routed, each
node marked with the workers ("tenants") it sent them to.

Modelled on SGLang's router (``sgl-model-gateway/src/policies/tree.rs`` at 9fbe6800a; first
as ``rust/src/tree.rs`` in #1893, 2024-11-04, and #1934): the router never asks a worker
what it caches. It guesses, from what it sent where:

- ``insert(tokens, tenant)`` walks the tree, splitting an edge where the prompt leaves it,
  adds the tenant to every node on the way (a node it reaches for the first time counts the
  node's length towards the tenant's size and gets access time 0), hangs the rest as a new
  leaf, and stamps the tenant's access time on the node where the prompt ends;
- ``prefix_match(tokens)`` walks as far as the prompt agrees with the tree, counting the
  tokens of a partly matched edge too, and names one tenant of the node it stopped in: the
  one that created the node, or, if the router has forgotten that one there, the first
  remaining (SGLang caches the creator and falls back on its map's order);
- ``evict_by_size(max_size)`` forgets, for every tenant over ``max_size`` tokens, its least
  recently stamped leaves until it fits: the tree's memory is bounded, never the workers'
  caches, which it cannot see.

Differences: tokens instead of characters (the router reads text, radixviz has token ids);
a logical clock instead of wall-clock epochs; a match stamps nothing (SGLang stamps one in
eight, at random, to save contention). No torch here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import heapq
from dataclasses import dataclass

from radixviz.cache.keys import match as _shared

if TYPE_CHECKING:
    from collections.abc import Hashable


class _Node:
    __slots__ = ("key", "children", "parent", "tenants", "creator")

    def __init__(self, key: tuple, parent, creator: Hashable):
        self.key = key
        self.children: dict = {}          # first token -> node
        self.parent = parent
        self.tenants: dict = {}           # tenant -> last access (insertion order kept)
        self.creator = creator            # SGLang's cached ``last_tenant``


@dataclass(frozen=True)
class TreeMatch:
    matched: int          # tokens of the prompt the tree holds
    tenant: object        # the worker the tree names for them (None: an empty tree)
    length: int           # tokens in the prompt


class ApproxTree:
    """SGLang's cache-aware router tree, on token tuples."""

    def __init__(self):
        self.root = _Node((), None, None)
        self.size: dict = {}              # tenant -> tokens the tree holds for it
        self._clock = 0

    def add_tenant(self, tenant: Hashable) -> None:
        """Make ``tenant`` known with nothing cached (SGLang inserts "" for each worker)."""
        self.root.tenants.setdefault(tenant, 0)
        self.size.setdefault(tenant, 0)

    def insert(self, tokens: tuple, tenant: Hashable) -> None:
        """Note that ``tokens`` were sent to ``tenant``."""
        self.add_tenant(tenant)
        self._clock += 1
        node, rest = self.root, tuple(tokens)
        while rest:
            child = node.children.get(rest[0])
            if child is None:
                leaf = _Node(rest, node, tenant)
                leaf.tenants[tenant] = self._clock
                node.children[rest[0]] = leaf
                self.size[tenant] += len(rest)
                return
            shared = _shared(child.key, rest)
            if shared < len(child.key):
                child = self._split(node, child, shared)
            if tenant not in child.tenants:
                child.tenants[tenant] = 0      # reached, not stamped (as SGLang)
                self.size[tenant] += len(child.key)
            node, rest = child, rest[shared:]
        node.tenants[tenant] = self._clock

    def prefix_match(self, tokens: tuple) -> TreeMatch:
        """How much of ``tokens`` the tree holds, and for which tenant."""
        node, rest, matched = self.root, tuple(tokens), 0
        while rest:
            child = node.children.get(rest[0])
            if child is None:
                break
            shared = _shared(child.key, rest)
            matched += shared
            node = child
            if shared < len(child.key):
                break
            rest = rest[shared:]
        return TreeMatch(matched, self._named_tenant(node), len(tokens))

    def matched_per_tenant(self, tokens: tuple) -> dict:
        """Tokens of ``tokens`` the tree holds for each tenant (what views explain with)."""
        node, rest, matched = self.root, tuple(tokens), 0
        out = dict.fromkeys(self.root.tenants, 0)
        while rest:
            child = node.children.get(rest[0])
            if child is None:
                break
            shared = _shared(child.key, rest)
            matched += shared
            for tenant in child.tenants:
                out[tenant] = matched
            if shared < len(child.key):
                break
            node, rest = child, rest[shared:]
        return out

    def evict_by_size(self, max_size: int) -> int:
        """Forget least recently stamped leaves of every tenant over ``max_size`` tokens;
        return the tokens forgotten."""
        heap, order = [], 0
        for node in self._walk():
            for tenant in self._leaf_tenants(node):
                heap.append((node.tenants[tenant], order, tenant, node))
                order += 1
        heapq.heapify(heap)
        forgotten = 0
        while heap:
            _, _, tenant, node = heapq.heappop(heap)
            if self.size.get(tenant, 0) <= max_size:
                continue
            if tenant not in node.tenants or any(tenant in c.tenants for c in node.children.values()):
                continue   # no longer one of the tenant's leaves
            del node.tenants[tenant]
            self.size[tenant] -= len(node.key)
            forgotten += len(node.key)
            parent = node.parent
            if not node.children and not node.tenants and parent is not None:
                del parent.children[node.key[0]]
            if parent is not None and parent is not self.root and tenant in parent.tenants \
                    and not any(tenant in c.tenants for c in parent.children.values()):
                order += 1
                heapq.heappush(heap, (parent.tenants[tenant], order, tenant, parent))
        return forgotten

    def node_count(self) -> int:
        return sum(1 for _ in self._walk()) - 1

    # ------------------------------------------------------------------ helpers

    def _split(self, parent, child: _Node, at: int):
        upper = _Node(child.key[:at], parent, child.creator)
        upper.tenants = dict(child.tenants)
        child.key = child.key[at:]
        child.parent = upper
        upper.children[child.key[0]] = child
        parent.children[upper.key[0]] = upper
        return upper

    def _named_tenant(self, node):
        if node.creator in node.tenants:
            return node.creator
        return next(iter(node.tenants), None)

    def _leaf_tenants(self, node) -> list:
        if node is self.root:
            return []
        below = set()
        for child in node.children.values():
            below.update(child.tenants)
        return [t for t in node.tenants if t not in below]

    def _walk(self):
        stack = [self.root]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.children.values())

