"""The views of the unified tree (engine unified). The shared views draw what its snapshot
declares (a pool a component, each node's part of it, ``⊘`` for a tombstone, each
component's sizes); these add what only this tree has: the Full lock and hit count on each
node, the SWA window stamp a lock left, the SWA and Mamba LRU orders under the header, the
page size, and the same in the Graphviz box and ``run --json``. Imported by name from the
engine's registry line once one of its trees is drawn.
"""
from __future__ import annotations

from rich.text import Text

from radixviz.cache.engines import engine_spec
from radixviz.cache.text import key_text
from radixviz.render.marks import LOCKED, LOCKED_2026, compact_ranges
from radixviz.render.pool import TOMBSTONE
from radixviz.render.views import (DETAIL_STYLE, box_lines, caption_parts, extra_lines, header_parts, held_text,
                                   held_words, mark_words, node_counts, node_details, node_fields, page_size_shown,
                                   part_text, tree_fields)

from .node import ComponentType
from .snapshot import UnifiedNodeSnapshot, UnifiedTreeSnapshot

STAMP_STYLE = "dim cyan"
LRU_SHOWN = 6   # nodes an LRU line names before "…"


def _words(tree: UnifiedTreeSnapshot) -> str:
    return ", ".join((tree.engine, *engine_spec(tree.engine).words(tree.settings)))


@header_parts.register
def _(tree: UnifiedTreeSnapshot) -> list[tuple[str, str]]:
    return [(f" · {tree.protected_size} protected", DETAIL_STYLE), (f" · {_words(tree)}", DETAIL_STYLE)]


@caption_parts.register
def _(tree: UnifiedTreeSnapshot) -> tuple[str, str, str]:
    words = ", ".join((f"{tree.engine} engine", *engine_spec(tree.engine).words(tree.settings)))
    return words, f" · {tree.protected_size} protected", "".join(f" · {held_words(h)}" for h in tree.held[1:])


@mark_words.register
def _(tree: UnifiedTreeSnapshot) -> dict[str, str]:
    return {LOCKED.name: LOCKED_2026}   # its nodes' Full lock, shown as "lock N"


@page_size_shown.register
def _(tree: UnifiedTreeSnapshot) -> int | None:
    return tree.page_size


def lru_orders(tree: UnifiedTreeSnapshot) -> dict[str, list[int]]:
    """Per component with an LRU list (SWA, Mamba): its node ids, least recently used first."""
    return {str(ct): list(reversed(sizes.lru)) for ct, sizes in zip(tree.component_types, tree.sizes)
            if ct != ComponentType.FULL}


@extra_lines.register
def _(tree: UnifiedTreeSnapshot) -> list[Text]:
    lines = []
    if len(tree.component_types) > 1:   # each further component's sizes, and the tombstone's mark
        sizes = " · ".join(held_words(held) for held in tree.held[1:])
        lines.append(Text(f"{sizes} · {TOMBSTONE} tombstone", DETAIL_STYLE))
    for name, ids in lru_orders(tree).items():
        names = [key_text(tree.nodes[i].key, 8) for i in ids[:LRU_SHOWN] if i in tree.nodes]
        more = " …" if len(ids) > LRU_SHOWN else ""
        lines.append(Text(f"{name} LRU, next to evict first: {' '.join(names) or 'empty'}{more}", DETAIL_STYLE))
    return lines


@tree_fields.register
def _(tree: UnifiedTreeSnapshot) -> dict:
    return {"protected_size": tree.protected_size, "lru": lru_orders(tree)}


@node_counts.register
def _(node: UnifiedNodeSnapshot, sep: str) -> str:
    return sep.join((f"lock {node.ref}", f"hits {node.hit_count}"))


@held_text.register
def _(node: UnifiedNodeSnapshot) -> str:
    return " · ".join(f"{c.component_type} lock {c.lock_ref}" for c in node.components)


def _stamp(node: UnifiedNodeSnapshot) -> str:
    swa = node.part(ComponentType.SWA)
    return f"stamp #{swa.uuid}" if swa is not None and swa.uuid else ""


@node_details.register
def _(node: UnifiedNodeSnapshot, sep: str) -> list[tuple[str, str]]:
    parts = node_details.dispatch(object)(node, sep)   # slots, counts, access, each part
    stamp = _stamp(node)
    if stamp and node.key:
        parts.append((f"{sep}{stamp}", STAMP_STYLE))
    return parts


@box_lines.register
def _(node: UnifiedNodeSnapshot) -> tuple[str, ...]:
    lines: tuple[str, ...] = (f"slots {compact_ranges(node.value)}",
                              f"{node_counts(node, ' · ')} · t {node.last_access}")
    if node.key:
        lines += tuple(part_text(part) for part in node.parts[1:])
        stamp = _stamp(node)
        lines += (stamp,) if stamp else ()
    return lines


@node_fields.register
def _(node: UnifiedNodeSnapshot) -> dict:
    swa = node.part(ComponentType.SWA)
    return {"lock_ref": node.ref, "hit_count": node.hit_count, "priority": node.priority,
            "creation_time": node.creation_time, "swa_stamp": None if swa is None else swa.uuid}
