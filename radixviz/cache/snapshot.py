"""Immutable pictures of the tree, so views can show any earlier step.

Every engine's snapshot is a ``TreeSnapshot`` of ``NodeSnapshot``s (an engine may add fields
to both); ``engine`` names the engine that made it, the one field views dispatch on (they
ask the registry, ``engines.py``, what that engine has).
"""
from __future__ import annotations

from dataclasses import dataclass
from sys import getsizeof
from typing import TYPE_CHECKING
from collections.abc import Iterator

from .memory import DEVICE, Held, NodePart
from .keys import get_child_key
from .recent import recent_property

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .memory import Component


@dataclass(frozen=True, slots=True)
class NodeSnapshot:
    id: int
    key: tuple
    value: tuple            # slot indices, as ints
    ref: int
    last_access: int
    children: tuple         # NodeSnapshot, in the tree's own child order
    subtree_tokens: int     # tokens held by this node and everything under it

    @property
    def parts(self) -> tuple[NodePart, ...]:
        """What it holds of each component its tree declares (``TreeSnapshot.components``), in
        that order: here the one pool's slots and locks. An engine that keeps more memory
        gives its node snapshots their own."""
        return (NodePart(DEVICE, self.value, self.ref),)

    def walk(self) -> Iterator[NodeSnapshot]:
        """This node and its descendants, depth first, parents before children."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def child_for(self, key: tuple, page_size: int = 1, start: int = 0) -> NodeSnapshot | None:
        """The child whose edge can share a prefix with ``key[start:]``, or None."""
        wanted = get_child_key(key, page_size, start)
        for child in self.children:
            if get_child_key(child.key, page_size) == wanted:
                return child
        return None


@dataclass(frozen=True)
class TreeSnapshot:
    root: NodeSnapshot
    evictable_size: int
    clock: int
    buggy_match: bool = False   # the 2024 engine's #7 switch; other engines have none
    engine: str = "2024"        # the registry's name of the engine that made it

    @property
    def settings(self) -> dict:
        """The engine's options this tree was made with, as the registry names them (the
        #7 switch has its own field, ``buggy_match``); an engine's snapshot adds its own."""
        return {}

    @property
    def total_size(self) -> int:
        return self.root.subtree_tokens

    @property
    def components(self) -> tuple[Component, ...]:
        """The kinds of memory its engine keeps (contract.py), the backbone first; each node's
        ``parts`` follow this order."""
        return (DEVICE,)

    @property
    def held(self) -> tuple[Held, ...]:
        """Per component, what the tree holds: evictable and protected sizes (here the one
        pool's: its evictable counter, and the tokens on locked nodes)."""
        return (Held(DEVICE, self.evictable_size, locked_tokens(self.root)),)

    @recent_property
    def nodes(self) -> dict:
        """Node id -> NodeSnapshot. Built from the index of the tree indexed last (a view reads
        the steps in turn, and a step shares all but a few paths with its neighbour): its dict
        copied, then only the subtrees that differ walked, so a step of a 5,000-node tree does
        not walk 5,000 nodes in Python."""
        before = _LAST_INDEXED[0]
        index = before.__dict__.get("nodes") if before is not None else None
        if index is None or before is self or before.root.id != self.root.id:
            out = {node.id: node for node in self.root.walk()}
        else:
            out = dict(index)
            _update_index(out, before.root, self.root)
        _LAST_INDEXED[0] = self
        return out

    @recent_property
    def parents(self) -> dict:
        """Node id -> parent id (the root maps to None)."""
        out: dict[int, int | None] = {self.root.id: None}
        for node in self.root.walk():
            for child in node.children:
                out[child.id] = node.id
        return out

    def path_to(self, node_id: int) -> list:
        """Ids from the root down to ``node_id``."""
        path, parents = [], self.parents
        at: int | None = node_id
        while at is not None:
            path.append(at)
            at = parents[at]
        return path[::-1]


_LAST_INDEXED: list = [None]   # the TreeSnapshot whose ``nodes`` was built last


def locked_tokens(root: NodeSnapshot) -> int:
    """Tokens on nodes a lock holds (a lock holds its whole path, so locked subtrees hang
    from the root): the protected size of a tree that keeps no such counter."""
    total, stack = 0, list(root.children)
    while stack:
        node = stack.pop()
        if node.ref > 0:
            total += len(node.key)
            stack.extend(node.children)
    return total


def _update_index(index: dict, old: NodeSnapshot, new: NodeSnapshot) -> None:
    """Make ``index`` (id -> node of the tree under ``old``) that of the tree under ``new``
    (the roots have the same id). Children are paired by id; a pair of the same object is a
    shared subtree, skipped; a child without a pair is walked whole. What is gone is removed
    before what is there is added, so a node that moved (under a split's new node) stays."""
    gone: list = []
    here: list = []
    stack = [(old, new)]
    while stack:
        before, after = stack.pop()
        if before is after:
            continue
        here.append(after)
        earlier = {child.id: child for child in before.children} if before is not None else {}
        for child in after.children:
            stack.append((earlier.pop(child.id, None), child))
        gone.extend(earlier.values())   # children no longer under this node (by id)
    for top in gone:
        for node in top.walk():
            index.pop(node.id, None)
    for node in here:   # changed nodes, and every node of a subtree new under its parent
        index[node.id] = node


@dataclass(frozen=True)
class ReleaseTreeSnapshot(TreeSnapshot):
    """The first release's tree (engine 2024), typed apart so views dispatch on it: its
    header names the #7 matcher (``buggy_match``) and the #4 drift of its counter. Its nodes
    are plain NodeSnapshots, as a plug-in engine's may be. ``short_values``: the tree took a
    value shorter than its key (#4), so its counter can drift; until then a counter that
    differs from the truth is an operation mid-way (a new leaf before the step counting it)."""
    short_values: bool = False


@dataclass(frozen=True)
class MatchPreview:
    """What a match would return, read off a snapshot (each engine's ``preview.py``)."""
    matched: int            # tokens reported as hit
    slots: tuple            # the slots returned
    path: tuple             # (node id, tokens taken from that node) from the root down
    split: tuple | None     # (node id, tokens kept above the cut) when the match would split
    last_node: int          # id of the node that would be returned (before any split)


def unshared_bytes(root: NodeSnapshot, before: NodeSnapshot | None) -> int:
    """Bytes of the node snapshots under ``root`` that the tree under ``before`` does not
    share: what keeping this tree costs on top of that one. A step changes the nodes on a few
    paths and shares every other subtree, so this walks only those paths."""
    total, stack = 0, [(root, before)]
    while stack:
        node, old = stack.pop()
        if node is old:
            continue
        total += getsizeof(node) + getsizeof(node.children)
        if old is None or node.value is not old.value:
            total += getsizeof(node.value)
        was = {kid.id: kid for kid in old.children} if old is not None else {}
        stack.extend((kid, was.get(kid.id)) for kid in node.children if kid is not was.get(kid.id))
    return total


def snapshot_node(node: Any) -> NodeSnapshot:
    """Snapshot of a live node, reusing cached snapshots of unchanged subtrees."""
    return snapshot_subtree(node, _node_snapshot)


def _node_snapshot(node: Any, kids: tuple) -> NodeSnapshot:
    value = tuple(node.value.tolist()) if node.value is not None else ()
    return NodeSnapshot(node.id, node.key, value, node.ref_counter, node.last_access_time,
                        kids, len(node.key) + sum(k.subtree_tokens for k in kids))


def snapshot_subtree(node: Any, make: Callable[[Any, tuple], Any]):
    """``node``'s snapshot, building ``make(node, child snapshots)`` for every node whose cached
    ``_snap`` was invalidated (both engines' nodes cache theirs the same way)."""
    if node._snap is not None:
        return node._snap
    # iterative post-order: deep trees must not hit the recursion limit
    stack = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if current._snap is not None:
            continue
        if not expanded:
            stack.append((current, True))
            stack.extend((c, False) for c in current.children.values() if c._snap is None)
            continue
        current._snap = make(current, tuple(c._snap for c in current.children.values()))
    return node._snap


def invalidate(node: Any) -> None:
    """Drop the cached snapshots of ``node`` and its ancestors: call it in every mutation.

    Invariant: a node without a cached snapshot has no ancestor with one, so the walk stops
    at the first node that is already clear (with nobody taking snapshots, at once). A node
    just hung into the tree has no snapshot yet: invalidate its new parent instead.
    """
    while node is not None and node._snap is not None:
        node._snap = None
        node = node.parent
