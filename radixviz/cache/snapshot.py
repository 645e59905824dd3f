"""Immutable pictures of the tree, so views can show any earlier step.

Every engine's snapshot is a ``TreeSnapshot`` of ``NodeSnapshot``s (an engine may add fields
to both); ``engine`` names the engine that made it, the one field views dispatch on (they
ask the registry, ``engines.py``, what that engine has).
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from sys import getsizeof
from typing import TYPE_CHECKING, Any
from collections.abc import Iterator

from .memory import DEVICE, Held, NodePart
from .keys import get_child_key
from .recent import recent_property

if TYPE_CHECKING:
    from collections.abc import Callable

    from .memory import Component


@dataclass(frozen=True, slots=True)
class NodeSnapshot:
    """One node as it was. Equality compares whole subtrees, with a loop: the generated
    ``__eq__``, ``__hash__`` and ``__repr__`` of a dataclass recurse into ``children``, and a
    learner's tree can be thousands of levels deep. A subclass gets these three, not its own."""
    id: int
    key: tuple
    value: tuple            # slot indices, as ints
    ref: int
    last_access: int
    children: tuple         # NodeSnapshot, in the tree's own child order
    subtree_tokens: int     # tokens held by this node and everything under it

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # @dataclass keeps a method the class body (or this hook) already put on the class
        super(NodeSnapshot, cls).__init_subclass__(**kwargs)   # (slots: the class is made twice)
        for name in ("__eq__", "__hash__", "__repr__"):
            setattr(cls, name, getattr(NodeSnapshot, name))

    def __eq__(self, other: object) -> bool:
        pairs = [(self, other)]
        while pairs:
            a, b = pairs.pop()
            if a is b:
                continue
            if type(a) is not type(b):
                return False
            if any(getattr(a, f) != getattr(b, f) for f in _own_fields(type(a))):
                return False
            if len(a.children) != len(b.children):
                return False
            pairs.extend(zip(a.children, b.children))
        return True

    def __hash__(self) -> int:
        # equal subtrees have equal own fields: hashing those alone is consistent, and O(1)
        return hash((type(self), self.id, self.key, self.ref, self.last_access, self.subtree_tokens))

    def __repr__(self) -> str:
        kids = ", ".join(f"#{c.id}" for c in self.children[:8]) + (", …" if len(self.children) > 8 else "")
        return f"{type(self).__name__}(id={self.id}, key={self.key!r}, ref={self.ref}, children=[{kids}])"

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

    @property
    def nodes(self) -> dict:
        """Node id -> NodeSnapshot."""
        return self._index[0]

    @property
    def parents(self) -> dict:
        """Node id -> parent id (the root maps to None)."""
        return self._index[1]

    @recent_property
    def _index(self) -> tuple[dict, dict]:
        """``(nodes, parents)``. Built from the index of the tree indexed last (a view reads
        the steps in turn, and a step shares all but a few paths with its neighbour): its
        dicts copied, then only the subtrees that differ walked, so a step of a 5,000-node
        tree does not walk 5,000 nodes in Python."""
        before = _LAST_INDEXED[0]
        index = before.__dict__.get("_index") if before is not None else None
        if index is None or before is self or before.root.id != self.root.id:
            nodes: dict = {}
            parents: dict[int, int | None] = {self.root.id: None}
            for node in self.root.walk():
                nodes[node.id] = node
                for child in node.children:
                    parents[child.id] = node.id
        else:
            nodes, parents = dict(index[0]), dict(index[1])
            _update_index(nodes, parents, before.root, self.root)
        _LAST_INDEXED[0] = self
        return nodes, parents

    def path_to(self, node_id: int) -> list:
        """Ids from the root down to ``node_id``."""
        path, parents = [], self.parents
        at: int | None = node_id
        while at is not None:
            path.append(at)
            at = parents[at]
        return path[::-1]


_LAST_INDEXED: list = [None]   # the TreeSnapshot whose ``nodes`` was built last


def fold_up(top: NodeSnapshot, combine: Callable[[NodeSnapshot, list], Any]) -> Any:
    """``combine(node, its children's values in order)`` for ``top`` and every node under
    it, children first: the value at ``top``. With a stack, not recursion: a learner's tree
    can be thousands of levels deep."""
    done: dict = {}   # id(node) -> its value, until its parent takes it
    stack = [(top, False)]
    while stack:
        node, expanded = stack.pop()
        if not expanded:
            stack.append((node, True))
            stack.extend((c, False) for c in node.children)
            continue
        done[id(node)] = combine(node, [done.pop(id(c)) for c in node.children])
    return done[id(top)]


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


def _own_fields(kind: type) -> tuple:
    """The dataclass fields of a NodeSnapshot type but ``children`` (compared by the walk)."""
    found = _OWN_FIELDS.get(kind)
    if found is None:
        found = _OWN_FIELDS[kind] = tuple(f.name for f in fields(kind) if f.name != "children")
    return found


_OWN_FIELDS: dict = {}


def _update_index(index: dict, parents: dict, old: NodeSnapshot, new: NodeSnapshot) -> None:
    """Make ``index`` (id -> node) and ``parents`` (id -> parent id) of the tree under ``old``
    those of the tree under ``new`` (the roots have the same id). Children are paired by id; a
    pair of the same object is a shared subtree, skipped; a child without a pair is walked
    whole. What is gone is removed before what is there is added, so a node that moved
    (under a split's new node) stays."""
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
            parents.pop(node.id, None)
    for node in here:   # changed nodes, and every node of a subtree new under its parent
        index[node.id] = node
        for child in node.children:
            parents[child.id] = node.id


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
    below = sum([k.subtree_tokens for k in kids]) if kids else 0
    return NodeSnapshot(node.id, node.key, value, node.ref_counter, node.last_access_time,
                        kids, len(node.key) + below)


def snapshot_subtree(node: Any, make: Callable[[Any, tuple], Any]):
    """``node``'s snapshot, building ``make(node, child snapshots)`` for every node whose cached
    ``_snap`` was invalidated (both engines' nodes cache theirs the same way). While
    ``header_of`` asks, nothing is built: it notes ``node`` and ``make`` and returns PENDING."""
    if _HEADER[0] is not None:
        _HEADER[0] = (node, make)
        return PENDING
    _ROOT[0] = node
    if node._snap is not None:
        return node._snap
    # iterative post-order: deep trees must not hit the recursion limit
    built = 0
    stack = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if current._snap is not None:
            continue
        if not expanded:
            stack.append((current, True))
            stack.extend([(c, False) for c in current.children.values() if c._snap is None])
            continue
        made = current._snap = make(current, tuple([c._snap for c in current.children.values()]))
        built += getsizeof(made) + getsizeof(made.children) + getsizeof(made.value)
    _BUILT[0] += built
    return node._snap


def invalidate(node: Any) -> None:
    """Drop the cached snapshots of ``node`` and its ancestors: call it in every mutation.

    Invariant: a node without a cached snapshot has no ancestor with one, so the walk stops
    at the first node that is already clear (with nobody taking snapshots, at once). A node
    just hung into the tree has no snapshot yet: invalidate its new parent instead.
    """
    touched = _TOUCHED[0]
    if touched is not None:   # a tracer checks that a step changed only what it says it did
        if len(touched) < 16:
            touched.append(node)
        else:
            _TOUCHED[0] = None
    while node is not None and node._snap is not None:
        node._snap = None
        node = node.parent


# ---------------------------------------------------------------- pictures made when looked at
#
# A step that changes only some nodes' own fields (a visit's access time, a lock count) would
# cost a whole path of new node snapshots: the node's, then each ancestor's, whose children
# changed. On a path thousands of levels deep every step then costs thousands, and a descent
# costs their square. Such a step's picture is a LazyTree instead: the picture before it
# (one made whole, or another LazyTree), the new snapshot of the one node it changed, and
# the tree's own fields; the tree is made from these when a view first asks for it.

PENDING: Any = object()          # the root of a tree whose header was asked for alone
# the nodes invalidated since a tracer's last step (None: not counted, or too many to count)
_TOUCHED: list = [None]
_ROOT: list = [None]             # the live node snapshot_subtree was last asked to picture
_BUILT: list = [0]               # bytes of node snapshots snapshot_subtree made (built_bytes)
_HEADER: list = [None]           # while header_of runs: () until snapshot_subtree notes (node, make)


def header_of(snapshot: Callable[[], TreeSnapshot]) -> tuple[TreeSnapshot, Any, Any]:
    """``(tree, live root, make)``: what ``snapshot()`` says of the tree as a whole, its
    root left PENDING, and the live root and node maker it would have used; or a whole
    tree and None, None for an engine whose snapshot does not go through snapshot_subtree."""
    _HEADER[0] = ()
    try:
        tree = snapshot()
        found = _HEADER[0]
    finally:
        _HEADER[0] = None
    if not found or tree.root is not PENDING:
        return tree, None, None
    return tree, found[0], found[1]


class LazyTree:
    """The picture after a step that changed only ``changed``'s own fields (or none), made
    when first read (``tree``; kept on the few read last)."""

    __slots__ = ("before", "header", "changed", "base", "steps", "__dict__")

    def __init__(self, before: TreeSnapshot | LazyTree, header: TreeSnapshot,
                 changed: NodeSnapshot | None) -> None:
        self.before, self.header, self.changed = before, header, changed
        self.base: TreeSnapshot = before.base if isinstance(before, LazyTree) else before
        self.steps: int = before.steps + 1 if isinstance(before, LazyTree) else 1

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LazyTree, TreeSnapshot)):
            return self.tree == picture(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @recent_property
    def tree(self) -> TreeSnapshot:
        shells: dict = {}   # node id -> its newest own fields, from this step back to the base
        at: TreeSnapshot | LazyTree = self
        while isinstance(at, LazyTree):
            if at.changed is not None and at.changed.id not in shells:
                shells[at.changed.id] = at.changed
            at = at.before
        return _with_fields(self.header, self.base, shells)


def picture(tree: TreeSnapshot | LazyTree) -> TreeSnapshot:
    """The tree a picture shows (a LazyTree made on first read)."""
    return tree.tree if isinstance(tree, LazyTree) else tree


def _with_fields(header: TreeSnapshot, base: TreeSnapshot, shells: dict) -> TreeSnapshot:
    """``header`` with ``base``'s nodes, those in ``shells`` given the own fields there: the
    shells, their children as in ``base``, and their ancestors copied to hold them."""
    if not shells:
        return replace(header, root=base.root)
    nodes, parents = base.nodes, base.parents
    below: dict = {}     # id -> ids of its children on a way to a shell
    for node_id in shells:
        at = node_id
        while at in parents and parents[at] is not None and at not in below.get(parents[at], ()):
            below.setdefault(parents[at], set()).add(at)
            at = parents[at]
    made: dict = {}
    stack = [(base.root.id, False)]
    while stack:   # children first, with a stack: the way down may be thousands of levels
        node_id, expanded = stack.pop()
        if not expanded:
            stack.append((node_id, True))
            stack.extend((c, False) for c in below.get(node_id, ()))
            continue
        old = nodes[node_id]
        shell = shells.get(node_id, old)
        kids = tuple(made.get(c.id, c) for c in old.children) if node_id in below else old.children
        made[node_id] = replace(shell, children=kids, subtree_tokens=old.subtree_tokens)
    return replace(header, root=made[base.root.id])


def count_touches() -> None:
    """Start counting the nodes ``invalidate`` is called on (a tracer, after each step)."""
    _TOUCHED[0] = []


def touched_since() -> list | None:
    """The nodes invalidated since ``count_touches``; None if not counted or past 16."""
    return _TOUCHED[0]


def root_noted() -> Any:
    """The live node the last snapshot_subtree call pictured (a tracer's: its cache's root)."""
    return _ROOT[0]


def built_bytes() -> int:
    """Bytes of the node snapshots made since the last call: what the pictures taken since
    cost on top of what they share (everything else came from the cache of the one before).
    Counted as they are made: comparing two trees misses a subtree that moved whole under a
    node of its own (a split near the root), and walked it all."""
    made, _BUILT[0] = _BUILT[0], 0
    return made
