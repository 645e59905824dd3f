"""A plain re-reading of SGLang's first radix cache, kept as the reference and the baseline.

Written from the chapter's description of the first release, in that release's shape:
children are a dict from the whole edge (a tuple of tokens) to the child, every child is
scanned, edges are compared one token at a time in Python, and the helpers recurse. It
shares no code with ``radixviz.cache`` on purpose: tests run the two side by side and
``bench/core.py`` times them.

Where the release read the wall clock, this reads a logical clock instead: building a node
and entering a match or insert helper each take the next tick, so LRU order is exact and
the same on every run. ``buggy_match`` switches to the matcher as it was before PR #7.
"""
from __future__ import annotations

import heapq

import torch


def common_length(edge, key) -> int:
    """How many leading tokens ``edge`` and ``key`` share, counted one by one."""
    count = 0
    for mine, theirs in zip(edge, key):
        if mine != theirs:
            break
        count += 1
    return count


class NaiveNode:
    """A node: no key of its own (the parent's dict holds the edge), slots, count, time."""

    def __init__(self, stamp: int):
        self.children: dict = {}
        self.parent: NaiveNode | None = None
        self.value = None
        self.ref_counter = 0
        self.last_access_time = stamp

    def __lt__(self, other: NaiveNode) -> bool:
        return self.last_access_time < other.last_access_time


class NaiveRadixCache:
    def __init__(self, disable: bool = False, buggy_match: bool = False):
        self.disable = disable
        self.buggy_match = buggy_match
        self.reset()

    def reset(self) -> None:
        self.clock = 0
        self.root_node = self._make_node()
        self.root_node.value = torch.empty(0, dtype=torch.int64)
        self.root_node.ref_counter = 1  # the root is pinned: eviction stops when it surfaces
        self.evictable_size_ = 0

    # ------------------------------------------------------------------ public

    def match_prefix(self, key):
        key = tuple(key)
        if self.disable:
            return torch.empty(0, dtype=torch.int64), self.root_node
        pieces: list = []
        last = [self.root_node]
        self._match_prefix_helper(self.root_node, key, pieces, last)
        hit = torch.cat(pieces) if pieces else torch.empty(0, dtype=torch.int64)
        return hit, last[0]

    def insert(self, key, value=None) -> int:
        key = tuple(key)
        if self.disable:
            return len(key)
        if value is None:
            value = [t if isinstance(t, int) else ord(t) for t in key]
        if not isinstance(value, torch.Tensor):
            value = torch.tensor(list(value), dtype=torch.int64)
        return self._insert_helper(self.root_node, key, value)

    def evict(self, num_tokens: int, evict_callback) -> None:
        if self.disable:
            raise RuntimeError("cache disabled")
        heap = self._collect_leaves()
        heapq.heapify(heap)
        freed = 0
        while freed < num_tokens and heap:
            leaf = heapq.heappop(heap)
            if leaf is self.root_node:
                break
            if leaf.ref_counter > 0:
                continue
            freed += evict_callback(leaf.value)
            self._delete_leaf(leaf)
            if not leaf.parent.children:
                heapq.heappush(heap, leaf.parent)

    def inc_ref_counter(self, node) -> int:
        change = 0
        while node is not self.root_node:
            if node.ref_counter == 0:
                self.evictable_size_ -= len(node.value)
                change -= len(node.value)
            node.ref_counter += 1
            node = node.parent
        return change

    def dec_ref_counter(self, node) -> int:
        change = 0
        while node is not self.root_node:
            if node.ref_counter == 1:
                self.evictable_size_ += len(node.value)
                change += len(node.value)
            node.ref_counter -= 1
            node = node.parent
        return change

    def evictable_size(self) -> int:
        return self.evictable_size_

    def total_size(self) -> int:
        return self._count_tokens(self.root_node)

    def pretty_print(self) -> None:
        self._print_under(self.root_node, 0)
        print(f"#tokens: {self.total_size()}")

    # --------------------------------------------------------- for comparisons

    def edge_of(self, node) -> tuple:
        """The tokens on the edge into ``node`` (found, as the release would, by a scan)."""
        if node.parent is None:
            return ()
        for edge, child in node.parent.children.items():
            if child is node:
                return edge
        raise LookupError("node is not attached")

    def path_keys(self, node) -> tuple:
        """The edges from the root down to ``node``."""
        edges = []
        while node is not self.root_node:
            edges.append(self.edge_of(node))
            node = node.parent
        return tuple(reversed(edges))

    def structure(self, node=None) -> tuple:
        """(edge, slots, ref, time, children...) for the subtree, children in dict order."""
        node = self.root_node if node is None else node
        return (self.edge_of(node), tuple(node.value.tolist()), node.ref_counter,
                node.last_access_time,
                tuple(self.structure(child) for child in node.children.values()))

    # ---------------------------------------------------------------- helpers

    def _match_prefix_helper(self, node, key, pieces, last) -> None:
        node.last_access_time = self._tick()
        for edge, child in node.children.items():
            shared = common_length(edge, key)
            if shared == 0:
                continue
            if self.buggy_match:
                cut_here = shared == len(key) and shared != len(edge)
            else:
                cut_here = shared < len(edge)
            if cut_here:
                upper = self._split_node(edge, child, shared)
                pieces.append(upper.value)
                last[0] = upper
            else:
                pieces.append(child.value[:shared] if self.buggy_match else child.value)
                last[0] = child
                self._match_prefix_helper(child, key[shared:], pieces, last)
            return

    def _split_node(self, edge, child, at):
        upper = self._make_node()
        upper.children = {edge[at:]: child}
        upper.parent = child.parent
        upper.ref_counter = child.ref_counter
        upper.value = child.value[:at]
        child.parent = upper
        child.value = child.value[at:]
        upper.parent.children[edge[:at]] = upper
        del upper.parent.children[edge]
        return upper

    def _insert_helper(self, node, key, value) -> int:
        node.last_access_time = self._tick()
        for edge, child in node.children.items():
            shared = common_length(edge, key)
            if shared == len(edge):
                if shared == len(key):
                    return shared
                return shared + self._insert_helper(child, key[shared:], value[shared:])
            if shared:
                upper = self._split_node(edge, child, shared)
                return shared + self._insert_helper(upper, key[shared:], value[shared:])
        if key:
            leaf = self._make_node()
            leaf.parent = node
            leaf.value = value
            node.children[key] = leaf
            self.evictable_size_ += len(value)
        return 0

    def _collect_leaves(self) -> list:
        found: list = []

        def visit(node):
            if not node.children:
                found.append(node)
            for child in node.children.values():
                visit(child)

        visit(self.root_node)
        return found

    def _delete_leaf(self, node) -> None:
        for edge, child in node.parent.children.items():  # noqa: B007 - used after the loop
            if child is node:
                break
        del node.parent.children[edge]
        self.evictable_size_ -= len(edge)

    def _count_tokens(self, node) -> int:
        return len(node.value) + sum(self._count_tokens(c) for c in node.children.values())

    def _print_under(self, node, indent: int) -> None:
        for edge, child in node.children.items():
            print(" " * indent, len(edge), edge[:10], f"r={child.ref_counter}")
            self._print_under(child, indent + 2)

    def _tick(self) -> int:
        self.clock += 1
        return self.clock

    def _make_node(self) -> NaiveNode:
        return NaiveNode(self._tick())
