"""The tree view's rows as a sequence that builds only the rows asked for.

A view that shows forty rows of a 5,000-node tree must not format 5,000 lines at every step.
What a row needs (how many rows a subtree takes, which ids it holds, whether a lock shows
in it) is kept per node snapshot: snapshots are immutable and a step shares every untouched
subtree with the frame before it, so a step pays only for the nodes it changed and the rows
on screen. Finding row ``i`` walks down from the root, skipping whole subtrees by their
row counts.

Row order and text are ``TreeView``'s (render/tree.py), which is built on this sequence.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .marks import EVICTED, LOCKED
from .subtree import PLAIN_ROWS, post_order, subtree_size, unreferenced_tokens  # noqa: F401 - tree.py imports it here
from .views import has_namespaces, load_views

if TYPE_CHECKING:
    from ..cache.snapshot import NodeSnapshot, TreeSnapshot

_NODE, _FOLD = 0, 1   # kinds of child entry: a node (and its subtree), or a "… N more" line


class TreeRows(Sequence):
    """The lines of ``view`` (a TreeView): the header, a line per node shown (folded as the
    view folds), the evicted leaves, the legend. Each line is built on first access;
    ``line_of`` finds a node's line without building any."""

    def __init__(self, view) -> None:
        self.view, self.tree = view, view.tree
        self.max_depth, self.max_children = view.max_depth, view.max_children
        self.node_marks = view.node_marks
        self.groups = _namespace_groups(view.tree)
        self.keep = self._ancestors_of(self.node_marks.interesting())
        self._built: dict = {}
        # (id(node), depth) -> _entries(node, depth): the row counts under a node are asked
        # for again by each row count above it, by line_of and by every walk to a row
        self._entry_memo: dict = {}
        self._rows_memo: dict = {}    # (id(node), depth) -> _rows, for nodes on a marked way
        self._group_of = {c.id: g for g in self.groups or () for c in g.children}
        root = self.tree.root
        rows, locked = self._rows(root, 0)
        self.node_rows = rows - 1                # the root's own row is the header
        self.footer = self._footer(locked)

    # ------------------------------------------------------------------ sequence

    def __len__(self) -> int:
        return 1 + self.node_rows + len(self.footer)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        line = self._built.get(index)
        if line is None:
            self._build_from(index)
            line = self._built[index]
        return line

    def line_of(self, node_id: int) -> int | None:
        """The index of the node's line, or None if it is folded away (or not in the tree)."""
        way = self._way_to(node_id)
        if way is None:
            return None
        node, depth, index = self.tree.root, 0, 0      # index: the line of ``node``
        for target in way:
            index += 1    # past ``node``'s own line (the header, for the root)
            for kind, child, _, size in self._entries(node, depth):
                if kind == _NODE and child is target:
                    node, depth = child, depth + 1
                    break
                index += size
            else:
                return None   # folded into a "… N more" line
        return index

    def _way_to(self, node_id: int) -> list | None:
        """What the walk from the root passes to reach ``node_id``, the root left out and the
        node's namespace line put in; None for the root or an id not in the tree."""
        tree = self.tree
        if node_id == tree.root.id or node_id not in tree.parents:
            return None
        nodes = tree.nodes
        way = [nodes[i] for i in tree.path_to(node_id)[1:]]
        if self.groups is not None:
            way.insert(0, self._group_of[way[0].id])
        return way

    # ------------------------------------------------------------------ building

    def _build_from(self, index: int, batch: int = 24) -> None:
        """Build the lines from ``index`` on, a batch at a time (a view asks for rows in order)."""
        stop = min(len(self), index + batch)
        if index == 0:
            self._built[0] = self.view.header_line()
            index += 1
        first_footer = 1 + self.node_rows
        if index < first_footer:
            for offset, line in enumerate(self._walk(index - 1, min(stop, first_footer) - index)):
                self._built[index + offset] = line
        for i in range(max(index, first_footer), stop):
            self._built[i] = self.footer[i - first_footer]

    def _walk(self, start: int, count: int):
        """``count`` node and fold lines from node row ``start`` (0: the root's first child):
        down to ``start`` skipping whole subtrees by their row counts, then on in order."""
        stack: list = []   # entries still to draw, last first: (kind, item, last, depth, prefix)
        node, depth, prefix = self.tree.root, 0, ""   # prefix: of ``node``'s children
        skip = start
        while True:
            entries = self._entries(node, depth)
            for position, (kind, child, last, size) in enumerate(entries):
                if skip >= size:
                    skip -= size
                    continue
                stack.extend((k, c, la, depth + 1, prefix) for k, c, la, _ in reversed(entries[position + 1:]))
                if kind == _FOLD or skip == 0:
                    stack.append((kind, child, last, depth + 1, prefix))
                    node = None
                else:
                    skip -= 1   # the row is below the child's own line
                    node, depth = child, depth + 1
                    prefix += "    " if last else "│   "
                break
            else:
                node = None
            if node is None:
                break
        view, marks = self.view, self.node_marks
        while stack and count > 0:
            kind, item, last, depth, prefix = stack.pop()
            count -= 1
            if kind == _FOLD:
                yield item(prefix)
                continue
            if isinstance(item, NamespaceGroup):
                yield view.namespace_line(item, prefix, last)
            else:
                yield view.node_line(item, marks.of(item), prefix, last)
            below = prefix + ("    " if last else "│   ")
            stack.extend((k, c, la, depth + 1, below) for k, c, la, _ in reversed(self._entries(item, depth)))

    def _entries(self, node: NodeSnapshot | NamespaceGroup, depth: int) -> list:
        """What is drawn under ``node`` (at ``depth``; the root is 0), in order: (kind, child
        or a fold line's builder, last, rows it takes). Kept for this view (read-only)."""
        key = (id(node), depth)
        known = self._entry_memo.get(key)
        if known is None:
            known = self._entry_memo[key] = self._entries_of(node, depth)
        return known

    def _entries_of(self, node, depth: int) -> list:
        children = self._children(node)
        if not children:
            return []
        keep, view = self.keep, self.view
        if self.groups is not None and node is self.tree.root:   # every namespace gets its line
            return [(_NODE, g, i == len(children) - 1, self._rows(g, 1)[0]) for i, g in enumerate(children)]
        if depth >= self.max_depth and depth > 0:
            # below the depth limit only the way down to a marked node is drawn
            kept = [c for c in children if c.id in keep]
            hidden = [c for c in children if c.id not in keep]
            out = [(_NODE, c, i == len(kept) - 1 and not hidden, self._rows(c, depth + 1)[0])
                   for i, c in enumerate(kept)]
            if hidden:
                out.append((_FOLD, view.deep_fold(hidden, bool(kept)), True, 1))
            return out
        shown: Sequence = children
        if len(children) > self.max_children:
            chosen = {c.id for c in children if c.id in keep}
            for child in children:
                if len(chosen) >= self.max_children:
                    break
                chosen.add(child.id)
            shown = [c for c in children if c.id in chosen]
        folded = len(shown) < len(children)
        out = [(_NODE, c, i == len(shown) - 1 and not folded, self._rows(c, depth + 1)[0])
               for i, c in enumerate(shown)]
        if folded:
            ids = {c.id for c in shown}
            out.append((_FOLD, view.wide_fold([c for c in children if c.id not in ids]), True, 1))
        return out

    def _rows(self, node: NodeSnapshot | NamespaceGroup, depth: int) -> tuple[int, bool]:
        """(rows ``node`` and what is drawn under it take, whether a drawn node shows a lock)."""
        if not self._drawn_whole(node, depth):
            return self._plain_rows(node, depth)   # type: ignore[arg-type]  # a group is drawn whole
        memo = self._rows_memo
        found = memo.get((id(node), depth))
        if found is not None:
            return found
        # children first, with a stack: the way down to a marked node can be thousands deep
        stack: list = [(node, depth, False)]
        while stack:
            at, level, expanded = stack.pop()
            if (id(at), level) in memo:
                continue
            if not expanded:
                stack.append((at, level, True))
                stack.extend((c, level + 1, False) for c in self._children(at)
                             if self._drawn_whole(c, level + 1) and (id(c), level + 1) not in memo)
                continue
            rows, locked = 1, bool(at.key and at.ref > 0)
            for kind, child, _, size in self._entries(at, level):
                rows += size
                if kind == _NODE:
                    locked = locked or self._rows(child, level + 1)[1]   # known by now, or plain
            memo[(id(at), level)] = (rows, locked)
        return memo[(id(node), depth)]

    def _drawn_whole(self, node: NodeSnapshot | NamespaceGroup, depth: int) -> bool:
        """Whether ``node``'s rows depend on the marks (it is on the way to a marked node):
        else they are the same in every frame sharing it (``_plain_rows``)."""
        return depth == 0 or node.id in self.keep or isinstance(node, NamespaceGroup)

    def _plain_rows(self, node: NodeSnapshot, depth: int) -> tuple[int, bool]:
        """``_rows`` for a subtree with no marked node in it: the same for every frame that
        shares the snapshot, so it is kept."""
        max_depth, max_children = self.max_depth, self.max_children

        def shown(n, d):
            if d >= max_depth or not n.children:
                return []
            return [(c, d + 1) for c in n.children[:max_children]]

        def combine(n, d, kids):
            rows = 1 + sum(r for r, _ in kids)
            if n.children and (d >= max_depth or len(n.children) > max_children):
                rows += 1   # the "… N more" line
            return rows, bool(n.key and n.ref > 0) or any(lock for _, lock in kids)
        return post_order(node, PLAIN_ROWS, lambda n, d: (id(n), d, max_depth, max_children), combine,
                           children=shown, extra=depth)

    def _children(self, node: NodeSnapshot | NamespaceGroup) -> tuple:
        """What hangs under ``node`` in the view: the root's children, or its namespaces."""
        if self.groups is not None and node is self.tree.root:
            return self.groups
        return node.children

    def _ancestors_of(self, ids: set) -> set:
        """The ids on the way from the root down to each of ``ids`` that is in the tree (and
        the namespace lines on those ways): each climbs until it meets a way already taken."""
        keep: set = set()
        parents = self.tree.parents
        for node_id in ids:
            at = node_id if node_id in parents else None
            while at is not None and at not in keep:
                keep.add(at)
                at = parents[at]
        if self.groups is not None:
            keep.update(g.id for g in self.groups if any(c.id in keep for c in g.children))
        return keep

    def _footer(self, locked: bool) -> list:
        """The evicted leaves, then the legend of the marks drawn."""
        marks, view = self.node_marks, self.view
        lines = [view.evicted_line(key) for _, key in marks.evicted]
        if not view.legend:
            return lines
        lines.extend(view.tier_lines())
        used = set()
        root = self.tree.root
        ids = self.tree.parents
        for node_id in marks.interesting():
            if node_id in ids and node_id != root.id:
                used.update(marks.of(_Probe(node_id)))
        if locked:
            used.add(LOCKED)
        if marks.evicted:
            used.add(EVICTED)
        if used:
            lines.extend(view.legend_lines(used, self._cut_edge()))
        return lines

    def _cut_edge(self) -> tuple | None:
        """(tokens taken, edge length) of the first edge, in the tree's order, that a match
        took only the start of; None if there is none."""
        found = []
        for node_id in self.node_marks.partial:
            place = self._find(node_id)
            if place is not None:
                node, order = place
                taken = self.node_marks.taken(node)
                if node.key and taken is not None:
                    found.append((order, taken, len(node.key)))
        return min(found)[1:] if found else None

    def _find(self, node_id: int):
        """(the node with ``node_id``, its place in a depth-first walk from the root), or None."""
        way = self._way_to(node_id)
        if way is None:
            return None
        node, order = self.tree.root, 0
        for target in way:
            order += 1
            for child in self._children(node):
                if child is target:
                    break
                order += _size(child)
            node = target
        return node, order


class NamespaceGroup:
    """One namespace's line under the root: it stands in the walk as a node whose children
    are the root's children in that namespace. Made per view and never memoised by id (the
    memos key on ids of snapshots they keep alive, and a group is not one)."""
    __slots__ = ("id", "name", "children", "subtree_tokens")
    key = ()
    ref = 0

    def __init__(self, number: int, name, children: tuple) -> None:
        self.id = -1 - number   # node ids are never negative
        self.name, self.children = name, children
        self.subtree_tokens = sum(c.subtree_tokens for c in children)


def namespace_groups(tree: TreeSnapshot) -> list | None:
    """``[(namespace, root children in it), ...]`` in order of first appearance, or None when
    the tree has no namespace but the plain one (then nothing is grouped)."""
    load_views(tree)
    if not has_namespaces(tree):   # by the tree's type: today's keys may carry one
        return None
    groups: dict = {}
    for child in tree.root.children:
        groups.setdefault(child.extra_key, []).append(child)
    if set(groups) <= {None}:
        return None
    return [(name, tuple(kids)) for name, kids in groups.items()]


def _namespace_groups(tree: TreeSnapshot) -> tuple | None:
    groups = namespace_groups(tree)
    if groups is None:
        return None
    return tuple(NamespaceGroup(i, name, kids) for i, (name, kids) in enumerate(groups))


def _size(node: NodeSnapshot | NamespaceGroup) -> int:
    """Nodes in ``node``'s subtree, itself included (a namespace line counts as one)."""
    if isinstance(node, NamespaceGroup):
        return 1 + sum(subtree_size(c) for c in node.children)
    return subtree_size(node)


class _Probe:
    """A stand-in node for asking NodeMarks which marks an id carries (not the lock: that
    one depends on the node's own ref count, and is found while counting rows)."""
    __slots__ = ("id",)
    key = ()
    ref = 0

    def __init__(self, node_id: int) -> None:
        self.id = node_id
