"""What each engine's tree shows, chosen by the type of its snapshot, not by the engine's flags.

Each function here is a ``functools.singledispatch`` on the snapshot it draws (a
``TreeSnapshot`` or a ``NodeSnapshot``); this module holds the implementations for the shared
types (a plug-in engine's plain snapshot) and for the first release's tree
(``ReleaseTreeSnapshot``). An engine whose snapshots add fields registers its own in a module
its registry line names (``EngineSpec.views``: ``radixviz.engines.v2026.views``), imported the
first time one of its trees is drawn, which is after its engine (and torch) loaded: views of
today's and the host tier's trees live in their wings, ``radixviz/engines/v2026/views.py`` and
``radixviz/engines/hicache/views.py`` (docs/architecture.md). This module imports no wing.

The parts are (text, style) pairs; tree.py (Rich), graphviz.py and jsondoc.py assemble them.
The defaults draw every component a tree declares (contract.py): a node's part of each one
after the first (its slots, its locks, ``⊘`` for a tombstone), each component's sizes in the
header and the caption, each further pool's grid; an engine's own views add to them.
"""
from __future__ import annotations

from functools import singledispatch
from importlib import import_module
from typing import TYPE_CHECKING

from radixviz.cache.engines import engine_spec
from radixviz.cache.snapshot import ReleaseTreeSnapshot
from radixviz.cache.text import slot_ranges

from ..pool import STATES, TOMBSTONE, ComponentGrid, PoolRows, StackedPoolRows, pool_title, slot_symbol
from ..subtree import unreferenced_tokens

if TYPE_CHECKING:
    from collections.abc import Iterable
    from ...cache.contract import Held, NodePart
    from ...cache.snapshot import NodeSnapshot, TreeSnapshot
    from rich.console import RenderableType
    from rich.text import Text

DETAIL_STYLE = "dim"
REMOVED = "evicted"   # what a view calls a leaf a step took out of the tree
WARN_STYLE = "bold red"
_loaded: set[str] = set()


def load_views(tree: TreeSnapshot) -> None:
    """Import the view module the spec of ``tree``'s engine names (once), so its snapshot
    types are registered before any function here is asked about them."""
    module = engine_spec(tree.engine).views
    if module and module not in _loaded:
        import_module(module)
        _loaded.add(module)


def compact_ranges(slots: Iterable[int]) -> str:
    """``0–5,22–26`` (marks.compact_ranges, which imports this module for the words below)."""
    return slot_ranges(slots, compact=True, max_runs=3)


# ------------------------------------------------------------------ marks and words

@singledispatch
def mark_words(tree: TreeSnapshot) -> dict[str, str]:
    """A mark's name -> what a legend calls it on this tree, where it says it otherwise."""
    return {}


@singledispatch
def removed_word(tree: TreeSnapshot) -> str:
    """How a view names a leaf a step removed from the tree."""
    return REMOVED


@singledispatch
def badge(tree: TreeSnapshot) -> tuple[str, str]:
    """``(text, tone)`` a status line starts with: the engine and its settings in words."""
    return engine_spec(tree.engine).badge(tree.settings), "engine"


@badge.register
def _(tree: ReleaseTreeSnapshot) -> tuple[str, str]:
    return ("matcher BUGGY", "buggy") if tree.buggy_match else ("matcher fixed", "fixed")


# ---------------------------------------------------------------- the tree's header

@singledispatch
def header_parts(tree: TreeSnapshot) -> list[tuple[str, str]]:
    """What the header says after ``N tokens · M evictable``: a plain tree names its engine
    and the engine's settings in words."""
    spec = engine_spec(tree.engine)
    more = [(f" · {held_words(held)}", DETAIL_STYLE) for held in tree.held[1:]]
    key = [(f" · {TOMBSTONE} tombstone", DETAIL_STYLE)] if more else []
    return [(f" · {', '.join((tree.engine, *spec.words(tree.settings)))}", DETAIL_STYLE), *more, *key]


@header_parts.register
def _(tree: ReleaseTreeSnapshot) -> list[tuple[str, str]]:
    parts = []
    truth = unreferenced_tokens(tree)
    # the #4 drift: the counter no longer tells the truth. Before any short value it differs
    # only between an insert's new leaf and the step that counts it: not a drift to warn about
    if tree.short_values and truth != tree.evictable_size:
        parts.append((f" ⚠≠{truth} unreferenced", WARN_STYLE))
    parts.append((" · matcher ", DETAIL_STYLE))
    parts.append(("BUGGY (pre-#7)" if tree.buggy_match else "fixed",
                  WARN_STYLE if tree.buggy_match else DETAIL_STYLE))
    return parts


@singledispatch
def caption_parts(tree: TreeSnapshot) -> tuple[str, str, str]:
    """A diagram's caption: (the engine in words, what follows the sizes when no title is
    given, what follows the caption or title always)."""
    words = engine_spec(tree.engine).words(tree.settings)
    return ", ".join((f"{tree.engine} engine", *words)), "", "".join(f" · {held_words(h)}" for h in tree.held[1:])


@caption_parts.register
def _(tree: ReleaseTreeSnapshot) -> tuple[str, str, str]:
    truth = unreferenced_tokens(tree)   # the release's insert (#4) makes the counter drift
    drift = f" (⚠ unreferenced nodes hold {truth})" if tree.short_values and truth != tree.evictable_size else ""
    return ("BUGGY matcher (pre-#7)" if tree.buggy_match else "fixed matcher"), "", drift


@singledispatch
def page_size_shown(tree: TreeSnapshot) -> int | None:
    """The page size an edge is drawn in groups of; None: the tree has no pages (an edge a
    pre-#7 match took part of is then drawn cut)."""
    return None


@singledispatch
def has_namespaces(tree: TreeSnapshot) -> bool:
    """Whether the tree's keys may carry a namespace (its root's children are then grouped)."""
    return False


@singledispatch
def extra_lines(tree: TreeSnapshot) -> list[Text]:
    """Lines a tree's view adds under the header (the host tier's tags); none by default."""
    return []


# ------------------------------------------------------------------- a node's line

@singledispatch
def node_counts(node: NodeSnapshot, sep: str) -> str:
    """A node's counts as the views show them: ``ref 2`` on a plain node."""
    return f"ref {node.ref}"


@singledispatch
def held_text(node: NodeSnapshot) -> str:
    """What holds a node, as the side-by-side diagram says it: ``ref 2`` on a plain node."""
    return f"ref {node.ref}"


@singledispatch
def node_details(node: NodeSnapshot, sep: str) -> list[tuple[str, str]]:
    """What follows a node's edge in the tree view: its slots, counts and last access, and a
    warning when it holds fewer slots than tokens (#4); then its part of every further
    component its tree declares (``part_text``)."""
    parts = [(f"{sep}slots {compact_ranges(node.value)}{sep}{node_counts(node, sep)}{sep}t {node.last_access}",
              DETAIL_STYLE)]
    if len(node.value) != len(node.key):
        parts.append((f"{sep}⚠ {slot_mismatch(node)}", WARN_STYLE))
    if node.key:
        parts.extend((f"{sep}{part_text(part)}", TOMBSTONE_STYLE if part.tombstone else DETAIL_STYLE)
                     for part in node.parts[1:])
    return parts


TOMBSTONE_STYLE = "italic yellow"


def part_text(part: NodePart) -> str:
    """A node's part of one component, in a few words: ``win 3–4 lock 1``; a tombstone (no
    data of that component, the node kept) ``win ⊘``, as the header's key says."""
    if part.slots is None:
        return f"{part.component.word} {TOMBSTONE}"
    locks = f" lock {part.locks}" if part.locks else ""
    return f"{part.component.word} {compact_ranges(part.slots) or '-'}{locks}"


def held_words(held: Held) -> str:
    """``window: 3 evictable, 1 protected``: what the tree holds of one component."""
    return f"{held.component.name}: {held.evictable} evictable, {held.protected} protected"


@singledispatch
def box_lines(node: NodeSnapshot) -> tuple[str, ...]:
    """The lines of a node's Graphviz box below its edge (and one a further component)."""
    lines: tuple[str, ...] = (f"slots {compact_ranges(node.value)}",
                              f"{node_counts(node, ' · ')} · t {node.last_access}")
    if len(node.value) != len(node.key):   # the release's insert (#4)
        lines += (f"⚠ {slot_mismatch(node)}",)
    if node.key:
        lines += tuple(part_text(part) for part in node.parts[1:])
    return lines


@singledispatch
def box_style(node: NodeSnapshot) -> dict:
    """Graphviz attributes of a node's box when no mark colours it: a dashed border for a
    node that lost a component's data (a tombstone), none otherwise."""
    if node.key and any(part.tombstone for part in node.parts[1:]):
        return {"style": "rounded,filled,dashed", "color": "#9a6700"}
    return {}


@singledispatch
def node_fields(node: NodeSnapshot) -> dict:
    """The JSON fields a node adds to ``id, key, value, ref, last_access``: none for a plain one."""
    return {}


@singledispatch
def tree_fields(tree: TreeSnapshot) -> dict:
    """The JSON fields of a tree beyond ``engine`` and its settings: none for a plain one."""
    return {}


def slot_mismatch(node: NodeSnapshot) -> str:
    return f"{len(node.value)} slots for {len(node.key)} tokens"



# ---------------------------------------------------------------------- the pools

def pool_lines(pool, marks=None, width: int = 40):
    """The pool pane's lines for ``pool`` (a PoolSnapshot): the device grid, or what the
    engine of its tree draws of its pools (each declared pool's grid under the first's)."""
    if pool.tree is not None:   # None: a pool shown before any engine loaded
        load_views(pool.tree)
    return pool_rows(pool.tree, pool, marks, width)


@singledispatch
def pool_rows(tree: TreeSnapshot | None, pool, marks, width: int):
    """The pool pane's lines (``PoolRows``' interface) of ``tree``'s pools: the device grid,
    and a titled grid for each further pool the tree's engine declares."""
    if pool.more:
        return StackedPoolRows(pool, marks, width)
    return PoolRows(pool, marks, width)


@singledispatch
def more_pools(tree: TreeSnapshot, pool, marks) -> list[RenderableType]:
    """What ``run`` prints under the device pool's grid: each further pool's title and grid."""
    shown: list[RenderableType] = []
    for i, component in enumerate(pool.pooled, start=1):
        grid = ComponentGrid(pool, i, marks)
        shown += [pool_title(component, grid.pool), grid]
    return shown


@singledispatch
def page_pools(tree: TreeSnapshot, frame, max_drawn: int, row: int) -> dict | None:
    """A second pool as a step's HTML page draws it (``title``, ``prefix`` of its cells'
    classes, ``used``, ``size``, ``legend``, and ``rows`` of (start, [(class, symbol)]), None
    past ``max_drawn`` slots), or None: by default the first further pool, in the device
    grid's cells."""
    pool = frame.pool
    if not pool.more:
        return None
    grid = ComponentGrid(pool, 1, frame.marks)
    shown: dict[str, object] = {
        "title": pool.pooled[0].title, "prefix": "p-", "used": grid.pool.used, "size": grid.pool.size,
        "rows": None, "legend": [(state, symbol, words) for state, (symbol, _style, words) in STATES.items()]}
    if grid.pool.size > max_drawn:
        return shown
    shown["rows"] = [(start, [(f"p-{grid.state(slot)}" + (" p-t" if slot in grid._touched else ""),
                               slot_symbol(grid.state(slot), grid.pool.refcounts[slot]))
                              for slot in range(start, min(start + row, grid.pool.size))])
                     for start in range(0, grid.pool.size, row)]
    return shown
