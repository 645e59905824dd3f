"""A rank's blocks as the radix tree draws them: a TreeSnapshot the stepper's views can show.

Blocks chain by parent hash; a chain of blocks each with one child is one edge, so the
picture has a node where prompts branch, as the server's own tree does. Blocks on a second
medium, in a namespace (an adapter, a cache salt), or whose parent never arrived hang under
a label node of their own ("[host (CPU_PINNED)]", "[adapter math · salt s1]", "[? parent not
held]"), whose key is the label's characters.
A token shows as its character when every token held is printable ASCII (radixviz's own
engines send code points), as its tokenizer piece when a tokenizer is given, else as its id.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import count
from typing import TYPE_CHECKING
from collections.abc import Callable

from radixviz.cache.snapshot import NodeSnapshot, TreeSnapshot

from .blocks import Block, BlockTree
from .tiers import namespace_name, tier_name, tier_rank

if TYPE_CHECKING:
    from collections.abc import Iterable

Decode = Callable[[int], str]


class StreamTreeSnapshot(TreeSnapshot):
    """A tree rebuilt from a server's KV events: no radixviz engine made it, so its views
    say where it came from (render/views/stream.py), not an engine's settings."""


@dataclass(frozen=True, slots=True)
class StreamNodeSnapshot(NodeSnapshot):
    """A node of a stream's tree: no slots and no access time travel on the wire, so its
    ``value`` holds the edge's token positions from the root and ``last_access`` is 0; its
    views say so (render/views/stream.py) instead of showing slots and a clock."""


def chars_if_ascii(blocks: Iterable[Block]) -> Decode | None:
    """``chr`` when every held token is printable ASCII, else None (show ids)."""
    if all(32 <= t < 127 for b in blocks for t in b.token_ids):
        return chr
    return None


def block_snapshot(tree: BlockTree, decode: Decode | None = None) -> StreamTreeSnapshot:
    blocks = list(tree.blocks.values())
    decode = decode or chars_if_ascii(blocks)
    ids = count(1)
    media = sorted(tree.media(), key=tier_rank)
    main = media[0] if media else None   # the device tier when there is one
    children: dict = {}           # (medium, parent hash) -> blocks under it
    for block in blocks:
        children.setdefault((block.medium, block.parent), []).append(block)
    held = {(b.medium, b.hash) for b in blocks}

    def edge(first: Block, depth: int) -> NodeSnapshot:
        run, at = [first], first
        while len(kids := children.get((at.medium, at.hash), ())) == 1:
            at = kids[0]
            run.append(at)
        kids = sorted(children.get((at.medium, at.hash), ()), key=lambda b: b.token_ids)
        key = tuple(_token(t, decode) for b in run for t in b.token_ids)
        made = tuple(edge(k, depth + len(key)) for k in kids)
        # no slots travel on the wire: the value is the edge's token positions from the root
        return StreamNodeSnapshot(next(ids), key, tuple(range(depth, depth + len(key))),
                            min(b.copies for b in run) - 1, 0, made,
                            len(key) + sum(c.subtree_tokens for c in made))

    def label(text: str, heads: list) -> NodeSnapshot:
        made = tuple(edge(h, 0) for h in sorted(heads, key=lambda b: b.token_ids))
        return StreamNodeSnapshot(next(ids), tuple(text), tuple(range(len(text))), 0, 0, made,
                            len(text) + sum(c.subtree_tokens for c in made))

    top: list[Block] = []
    groups: dict[str, list[Block]] = {}
    for block in blocks:
        if block.parent is not None and (block.medium, block.parent) in held:
            continue
        if block.parent is not None and not tree.holds(block.parent):
            name = "[? parent not held]"
        elif block.parent is not None:
            name = f"[{tier_name(block.medium)} under another tier]"
        elif (space := namespace_name(block)) is not None:
            name = f"[{space}]" if block.medium == main else f"[{tier_name(block.medium)} · {space}]"
        elif block.medium != main:
            name = f"[{tier_name(block.medium)}]"
        else:
            top.append(block)
            continue
        groups.setdefault(name, []).append(block)
    made = tuple(edge(h, 0) for h in sorted(top, key=lambda b: b.token_ids)) + \
        tuple(label(name, heads) for name, heads in sorted(groups.items()))
    root = NodeSnapshot(0, (), (), 1, 0, made, sum(c.subtree_tokens for c in made))
    return StreamTreeSnapshot(root, evictable_size=root.subtree_tokens, clock=tree.last_seq or 0)


def _token(token_id: int, decode: Decode | None):
    if decode is None:
        return token_id
    try:
        return decode(token_id)
    except (ValueError, OverflowError, TypeError):
        return token_id


def shared_prefixes(snapshot: TreeSnapshot, top: int = 3) -> list[tuple[int, int]]:
    """The deepest nodes where prompts branch: (tokens from the root, branches), deepest first."""
    found, stack = [], [(snapshot.root, 0)]
    while stack:
        node, depth = stack.pop()
        depth += len(node.key)
        if len(node.children) > 1 and node is not snapshot.root:
            found.append((depth, len(node.children)))
        stack.extend((c, depth) for c in node.children)
    return sorted(found, reverse=True)[:top]


def largest_subtrees(snapshot: TreeSnapshot, top: int = 3) -> list[tuple[str, int]]:
    """The root's largest subtrees: (the start of its edge, tokens under it), largest first."""
    kids = sorted(snapshot.root.children, key=lambda c: -c.subtree_tokens)[:top]
    return [("".join(map(str, c.key[:12])), c.subtree_tokens) for c in kids]
