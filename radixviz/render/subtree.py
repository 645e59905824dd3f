"""Values of a subtree kept per node snapshot: its ids, the slots its nodes hold, its
unreferenced tokens, the rows the tree view gives it.

Snapshots are immutable and a step shares every untouched subtree with the frame before it,
so a value kept for a snapshot serves every later frame that still holds it: a step pays
for the nodes it changed, not for the whole tree (a 5,000-node tree is stepped through as
fast as a 50-node one).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cache.snapshot import NodeSnapshot, TreeSnapshot


class Memo:
    """Values per node snapshot, least recently used dropped first once their total weight
    passes ``budget``; each entry keeps its snapshot alive, so its id is never reused."""

    def __init__(self, budget: int, weight=lambda value: 1) -> None:
        self.budget, self.weight, self.used = budget, weight, 0
        self.entries: OrderedDict = OrderedDict()

    def get(self, key):
        hit = self.entries.get(key)
        if hit is None:
            return None
        self.entries.move_to_end(key)
        return hit[1]

    def put(self, key, node: NodeSnapshot, value) -> None:
        self.entries[key] = (node, value)
        self.used += self.weight(value)
        while self.used > self.budget and len(self.entries) > 1:
            _, (_, old) = self.entries.popitem(last=False)
            self.used -= self.weight(old)


SIZES = Memo(200_000)               # id(node) -> nodes in its subtree
HEIGHTS = Memo(200_000)             # id(node) -> levels from it down to its deepest leaf
SLOTS = Memo(800_000, weight=len)   # id(node) -> frozenset of the slots its subtree holds
PLAIN_ROWS = Memo(200_000)               # (id(node), depth, max_depth, max_children) -> (rows, locked)
UNREFERENCED = Memo(200_000)        # id(node) -> tokens of unreferenced nodes in its subtree


def post_order(top, memo: Memo, key, combine, children=lambda node, extra: node.children,
                extra=None):
    """``combine(node, extra, child values)`` for ``top`` and every node under it whose value
    is not memoised yet, children first; iterative, as a chain of thousands of nodes is a tree
    too. ``extra`` is carried down (the depth) by ``children(node, extra)`` -> (child, extra)."""
    found = memo.get(key(top, extra))
    if found is not None:
        return found
    stack = [(top, extra, False)]
    while stack:
        node, info, expanded = stack.pop()
        k = key(node, info)
        if memo.get(k) is not None:
            continue
        kids = children(node, info)
        if not expanded:
            stack.append((node, info, True))
            stack.extend((c, ci, False) for c, ci in kids if memo.get(key(c, ci)) is None)
            continue
        memo.put(k, node, combine(node, info, [memo.get(key(c, ci)) for c, ci in kids]))
    return memo.get(key(top, extra))


def subtree_size(node: NodeSnapshot) -> int:
    """How many nodes ``node``'s subtree holds, itself included."""
    return post_order(node, SIZES, lambda n, _: id(n), lambda n, _, kids: 1 + sum(kids),
                       children=lambda n, _: [(c, None) for c in n.children])


def height(node: NodeSnapshot) -> int:
    """Levels below ``node`` (0 for a leaf)."""
    return post_order(node, HEIGHTS, lambda n, _: id(n), lambda n, _, kids: 1 + max(kids) if kids else 0,
                       children=lambda n, _: [(c, None) for c in n.children])


def unreferenced_tokens(tree: TreeSnapshot) -> int:
    """What ``evictable_size`` should say: the tokens of every node nobody references."""
    return post_order(tree.root, UNREFERENCED, lambda n, _: id(n),
                       lambda n, _, kids: (len(n.key) if n.key and n.ref == 0 else 0) + sum(kids),
                       children=lambda n, _: [(c, None) for c in n.children])


def tree_slots(tree: TreeSnapshot) -> frozenset:
    """Every slot some node of ``tree`` holds."""
    return subtree_slots(tree.root)


def subtree_slots(node: NodeSnapshot) -> frozenset:
    """Every slot ``node`` or a node under it holds."""
    return post_order(node, SLOTS, lambda n, _: id(n),
                       lambda n, _, kids: frozenset(n.value).union(*kids),
                       children=lambda n, _: [(c, None) for c in n.children])


def slot_holders(tree: TreeSnapshot, most: int = 16, deep: int = 64) -> tuple:
    """Slot sets whose union is ``tree_slots(tree)``: the root's own slots and one set per
    subtree under the root (when it has at most ``most`` children; else the union itself).
    Any step that changes the tree makes a new root, and the union at the root copies every
    slot of the tree (about 1 ms a step at 5,000 nodes) where a pool view asks about the
    few hundred slots on screen. A tree more than ``deep`` levels deep gets one set from a
    walk: kept per subtree, the sets of a chain of n nodes would hold n²/2 slots."""
    root = tree.root
    if height(root) > deep:
        return (frozenset(slot for node in root.walk() for slot in node.value),)
    if len(root.children) > most:
        return (tree_slots(tree),)
    return (frozenset(root.value),) + tuple(subtree_slots(child) for child in root.children)
