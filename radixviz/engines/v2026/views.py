"""The views of today's tree (engine 2026): locks, hits and priority on each node, page-sized
edges, namespaces and page hashes, the protected size in the header. Imported by name from
the engine's registry line once one of its trees is drawn (its engine has loaded torch)."""
from __future__ import annotations

from radixviz.cache.engines import engine_spec
from radixviz.engines.v2026.snapshot import ModernNodeSnapshot, ModernTreeSnapshot
from radixviz.script.kv_text import hash_text

from radixviz.render.marks import LOCKED, LOCKED_2026, compact_ranges
from radixviz.render.views import (DETAIL_STYLE, box_lines, caption_parts, has_namespaces, header_parts, held_text,
                                   mark_words, node_counts, node_details, node_fields, page_size_shown, slot_mismatch,
                                   tree_fields)

HASH_STYLE = "dim cyan"


def _policy_words(tree: ModernTreeSnapshot) -> list[str]:
    """The engine's words with the eviction policy named as one: ``lru eviction``."""
    words = list(engine_spec(tree.engine).words(tree.settings))
    if tree.eviction_policy in words:
        words[words.index(tree.eviction_policy)] += " eviction"
    return words


@header_parts.register
def _(tree: ModernTreeSnapshot) -> list[tuple[str, str]]:
    words = ", ".join((tree.engine, *engine_spec(tree.engine).words(tree.settings)))
    return [(f" · {tree.protected_size} protected", DETAIL_STYLE), (f" · {words}", DETAIL_STYLE)]


@caption_parts.register
def _(tree: ModernTreeSnapshot) -> tuple[str, str, str]:
    return ", ".join((f"{tree.engine} engine", *_policy_words(tree))), f" · {tree.protected_size} protected", ""


@mark_words.register
def _(tree: ModernTreeSnapshot) -> dict[str, str]:
    return {LOCKED.name: LOCKED_2026}   # its nodes carry lock_ref, shown as "lock N"


@page_size_shown.register
def _(tree: ModernTreeSnapshot) -> int | None:
    return tree.page_size


@has_namespaces.register
def _(tree: ModernTreeSnapshot) -> bool:
    return True


@tree_fields.register
def _(tree: ModernTreeSnapshot) -> dict:
    return {"protected_size": tree.protected_size}


@node_counts.register
def _(node: ModernNodeSnapshot, sep: str) -> str:
    return sep.join((f"lock {node.ref}", f"hits {node.hit_count}", f"prio {node.priority}"))


@held_text.register
def _(node: ModernNodeSnapshot) -> str:
    return f"lock_ref {node.ref} · hits {node.hit_count} · prio {node.priority}"


@node_details.register
def _(node: ModernNodeSnapshot, sep: str) -> list[tuple[str, str]]:
    parts = node_details.dispatch(object)(node, sep)   # slots, counts, access, a short value
    if node.hash_value:
        parts.append((f"{sep}{hash_text(node.hash_value)}", HASH_STYLE))
    return parts


@box_lines.register
def _(node: ModernNodeSnapshot) -> tuple[str, ...]:
    lines = (f"slots {compact_ranges(node.value)}", *stats_lines(node))
    if len(node.value) != len(node.key):
        lines += (f"⚠ {slot_mismatch(node)}",)
    return lines


def stats_lines(node: ModernNodeSnapshot) -> tuple[str, ...]:
    """A node's counts, times and page hashes, a box line each (the host tier's boxes too)."""
    lines = (node_counts(node, " · "), f"t {node.last_access} · born {node.creation_time}")
    return lines + ((hash_text(node.hash_value),) if node.hash_value else ())


@node_fields.register
def _(node: ModernNodeSnapshot) -> dict:
    hashes = node.hash_value
    return {"lock_ref": node.ref, "hit_count": node.hit_count, "priority": node.priority,
            "creation_time": node.creation_time, "extra_key": node.extra_key,
            "hash_value": None if hashes is None else list(hashes)}
