"""A rank's blocks as the radix tree draws them: a TreeSnapshot the stepper's views can show.

Blocks chain by parent hash; a chain of blocks each with one child is one edge, so the
picture has a node where prompts branch, as the server's own tree does. Blocks on a second
medium, in a namespace (an adapter, a cache salt), or whose parent never arrived hang under
a label node of their own ("[host (CPU_PINNED)]", "[adapter math · salt s1]", "[? parent not
held]"), whose key is the label's characters.
A token shows as its character when every token held is printable ASCII (radixviz's own
engines send code points), as its tokenizer piece when a tokenizer is given, else as its id.

``TreeBuilder`` keeps the node it made for each edge and, told which blocks a batch
changed, makes again only the edges on their way to the root: a batch costs what it
changed, and the snapshot shares every other subtree with the one before it (the views
then redraw only what changed). Walks use lists, not recursion: a conversation that
branches at every turn is a tree thousands of levels deep.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING
from collections.abc import Callable

from radixviz.cache.snapshot import NodeSnapshot, TreeSnapshot
from radixviz.collector import collector_paused

from .blocks import BlockTree
from .tiers import namespace_name, tier_name, tier_rank

if TYPE_CHECKING:
    from collections.abc import Iterable


Decode = Callable[[int], str]
_SHORT_TEXT: dict = {}   # token ids of a short block -> its characters (at most 95**4 keys)
UNKNOWN_PARENT = "[? parent not held]"


class StreamTreeSnapshot(TreeSnapshot):
    """A tree rebuilt from a server's KV events: no radixviz engine made it, so its views
    say where it came from (render/views/stream.py), not an engine's settings."""


@dataclass(frozen=True, slots=True)
class StreamNodeSnapshot(NodeSnapshot):
    """A node of a stream's tree: no slots and no access time travel on the wire, so its
    ``value`` holds the edge's token positions from the root and ``last_access`` is 0; its
    views say so (render/views/stream.py) instead of showing slots and a clock."""


class TreeBuilder:
    """The snapshot of one BlockTree, made again only where the tree changed."""

    def __init__(self, tree: BlockTree, decode: Decode | None = None) -> None:
        tree.ensure_index()
        self.tree, self.decode = tree, decode
        self.made: dict = {}      # head block's key -> (tokens above it, its edge's node)
        self.dirty: set = set()   # keys whose edge must be made again, and every key above them
        self.ids: dict = {}       # head block's key (or a label) -> its node's id, kept while held
        self.next_id = 1
        self.pieces: dict = {}    # key -> the block's tokens as a tokenizer draws them
        self.mode: Decode | None = None

    def forget(self, tree: BlockTree) -> None:
        """Draw ``tree`` from now on, making every edge again (ids kept where blocks are)."""
        tree.ensure_index()
        self.tree = tree
        self.made.clear()
        self.dirty.clear()
        self.ids = {k: v for k, v in self.ids.items() if k in tree.blocks or not isinstance(k, tuple)}

    def copy(self, tree: BlockTree) -> TreeBuilder:
        """A builder for ``tree``, a copy of this one's tree: what this one made is reused."""
        twin = TreeBuilder(tree, self.decode)   # (the copy's index came with it)
        twin.made, twin.dirty, twin.ids = dict(self.made), set(self.dirty), dict(self.ids)
        twin.next_id, twin.pieces, twin.mode = self.next_id, dict(self.pieces), self.mode
        return twin

    def changed(self, changes: Iterable) -> None:
        """Note the changes made to the tree (``BlockTree`` changes, either way round)."""
        blocks = self.tree.blocks
        climb = bool(self.made)   # nothing made yet: nothing to make again
        for key, before, after in changes:
            if key not in blocks:
                self.ids.pop(key, None)
                self.pieces.pop(key, None)
                self.made.pop(key, None)
            if not climb:
                continue
            self._climb(key)
            for block in (before, after):
                if block is not None and block.parent is not None:
                    self._climb((key[0], block.parent))

    def _climb(self, key: tuple) -> None:
        # an edge holding a changed block, and every edge above it, is made again; a key
        # already dirty has every key above it dirty too, so the climb stops there
        blocks, dirty, made = self.tree.blocks, self.dirty, self.made
        while key in blocks and key not in dirty:
            dirty.add(key)
            made.pop(key, None)
            key = (key[0], blocks[key].parent)

    def snapshot(self) -> StreamTreeSnapshot:
        # a node snapshot per edge made again, none in a cycle: the collector waits (collector.py)
        with collector_paused(bool(self.dirty) or not self.made):
            return self._snapshot()

    def _snapshot(self) -> StreamTreeSnapshot:
        tree = self.tree
        mode = self.decode or (chr if tree.unprintable == 0 else None)
        if mode is not self.mode:   # every token is drawn another way now
            self.made.clear()
            self.pieces.clear()
            self.mode = mode
        top, groups = self._top_level()
        made = [self._edge(key, 0) for key in _by_tokens(tree, top)]
        for name in sorted(groups):
            heads = [self._edge(key, 0) for key in _by_tokens(tree, groups[name])]
            made.append(StreamNodeSnapshot(self._id(name), tuple(name), tuple(range(len(name))), 0, 0, tuple(heads),
                                     len(name) + sum(h.subtree_tokens for h in heads)))
        self.dirty.clear()
        root = NodeSnapshot(0, (), (), 1, 0, tuple(made), sum(c.subtree_tokens for c in made))
        return StreamTreeSnapshot(root, evictable_size=root.subtree_tokens, clock=tree.last_seq or 0)

    def _top_level(self) -> tuple[list, dict]:
        """The keys of the blocks under the root, and those under each label node."""
        tree = self.tree
        media = sorted(tree.media(), key=tier_rank)
        main = media[0] if media else None   # the device tier when there is one
        top: list = []
        groups: dict = {}
        for medium, parent in tree.loose:
            for block_hash in tree.children(medium, parent):
                key = (medium, block_hash)
                block = tree.blocks[key]
                if parent is not None and not tree.holds(parent):
                    name = UNKNOWN_PARENT
                elif parent is not None:
                    name = f"[{tier_name(medium)} under another tier]"
                elif (space := namespace_name(block)) is not None:
                    name = f"[{space}]" if medium == main else f"[{tier_name(medium)} · {space}]"
                elif medium != main:
                    name = f"[{tier_name(medium)}]"
                else:
                    top.append(key)
                    continue
                groups.setdefault(name, []).append(key)
        return top, groups

    def _edge(self, head: tuple, depth: int) -> NodeSnapshot:
        """The node of the edge starting at block ``head``, ``depth`` tokens below the root
        (its value: the edge's token positions, as no slots travel on the wire)."""
        found = self.made.get(head)
        if found is not None and found[0] == depth:
            return found[1]
        tree, made = self.tree, self.made
        blocks = tree.blocks
        stack: list = [(head, depth, None)]
        while stack:
            key, at, parts = stack.pop()
            if parts is None:
                hit = made.get(key)
                if hit is not None and hit[0] == at:
                    continue
                run = self._run(key)
                length = sum([len(blocks[k].token_ids) for k in run])
                last = run[-1]
                heads = _by_tokens(tree, [(last[0], h) for h in tree.children(last[0], last[1])])
                stack.append((key, at, (run, heads)))
                stack.extend((h, at + length, None) for h in heads)
                continue
            run, heads = parts
            kids = tuple([made[h][1] for h in heads])
            tokens = self._piece(run[0]) if len(run) == 1 else tuple(chain.from_iterable(map(self._piece, run)))
            copies = min([blocks[k].copies for k in run])
            made[key] = (at, StreamNodeSnapshot(self._id(key), tokens, tuple(range(at, at + len(tokens))),
                                          copies - 1, 0, kids, len(tokens) + sum(k.subtree_tokens for k in kids)))
        return made[head][1]

    def _run(self, head: tuple) -> list:
        """``head`` and the blocks below it while each has exactly one child."""
        kids_of, medium = self.tree.kids, head[0]   # keyed (medium, parent hash): a block's own key
        run = [head]
        kids = kids_of.get(head)
        while kids is not None and len(kids) == 1:
            key = (medium, next(iter(kids)))
            run.append(key)
            kids = kids_of.get(key)
        return run

    def _piece(self, key: tuple) -> tuple:
        """The block's tokens as drawn: ids, characters, or (kept) a tokenizer's pieces."""
        token_ids = self.tree.blocks[key].token_ids
        if self.mode is None:
            return token_ids
        if self.mode is chr:   # every token held is printable ASCII: chr cannot fail
            if len(token_ids) > 4:
                return tuple(map(chr, token_ids))
            found = _SHORT_TEXT.get(token_ids)   # pages of a token or few repeat a lot
            if found is None:
                found = _SHORT_TEXT[token_ids] = tuple(map(chr, token_ids))
            return found
        found = self.pieces.get(key)
        if found is None:
            found = self.pieces[key] = tuple(_token(t, self.mode) for t in token_ids)
        return found

    def _id(self, key) -> int:
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = self.next_id
            self.next_id += 1
        return found


def block_snapshot(tree: BlockTree, decode: Decode | None = None) -> StreamTreeSnapshot:
    """The snapshot of ``tree``, made whole (``TreeBuilder`` makes it again in part)."""
    return TreeBuilder(tree, decode).snapshot()


def _by_tokens(tree: BlockTree, keys) -> list:
    if len(keys) < 2:
        return list(keys)
    blocks = tree.blocks
    return sorted(keys, key=lambda k: blocks[k].token_ids)


def _token(token_id: int, decode: Decode | None):
    if decode is None:
        return token_id
    try:
        return decode(token_id)
    except (ValueError, OverflowError, TypeError):
        return token_id


_BRANCHES: dict = {}   # id(node) -> (node, its subtree's deepest branch points from its edge's start)
_MAX_BRANCHES = 400_000


def shared_prefixes(snapshot: TreeSnapshot, top: int = 3) -> list[tuple[int, int]]:
    """The deepest nodes where prompts branch: (tokens from the root, branches), deepest first.
    Kept per node, so a tree that changed in a few places is looked at in those places."""
    if len(_BRANCHES) > _MAX_BRANCHES:
        _BRANCHES.clear()
    memo = _BRANCHES
    stack: list = [(c, False) for c in snapshot.root.children]
    while stack:   # children first, with a list: the tree may be thousands of levels deep
        node, expanded = stack.pop()
        hit = memo.get(id(node))
        if hit is not None and hit[0] is node:
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((c, False) for c in node.children)
            continue
        found = [(depth + len(node.key), ways) for c in node.children for depth, ways in memo[id(c)][1]]
        if len(node.children) > 1:
            found.append((len(node.key), len(node.children)))
        memo[id(node)] = (node, tuple(sorted(found, reverse=True)[:top]))
    found = [d for c in snapshot.root.children for d in memo[id(c)][1]]
    return sorted(found, reverse=True)[:top]


def largest_subtrees(snapshot: TreeSnapshot, top: int = 3) -> list[tuple[str, int]]:
    """The root's largest subtrees: (the start of its edge, tokens under it), largest first."""
    kids = sorted(snapshot.root.children, key=lambda c: -c.subtree_tokens)[:top]
    return [("".join(map(str, c.key[:12])), c.subtree_tokens) for c in kids]
