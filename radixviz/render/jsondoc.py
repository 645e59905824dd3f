"""The JSON document of ``radixviz run --json`` (schema: docs/json-schema.md).

Built from the session's records and a final snapshot, so it says exactly what the engine did.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.snapshot import fold_up
from radixviz.script.narrate import describe

from .source_map import locate, short_path
from .views import load_views, node_fields, tree_fields

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..cache.snapshot import NodeSnapshot, TreeSnapshot
    from ..script.frames import Frame, PoolSnapshot
    from radixviz.script.parser import Op, ScriptError
    from radixviz.script.session import Session


# 2: operations and steps are numbered from 1 ("op", "step"); 3: the declared memory, per tree
# (``components``) and per node (``parts``)
SCHEMA_VERSION = 3


def key_json(key: tuple):
    """A string when every token is a character (``"Hello"``), else a list of tokens."""
    if all(isinstance(t, str) and len(t) == 1 for t in key):
        return "".join(key)
    return list(key)


def op_args(op: Op) -> list:
    """``op.args`` as JSON: a key as ``key_json`` writes it, a count or matcher mode as is."""
    return [key_json(arg) if isinstance(arg, tuple) else arg for arg in op.args]


def tree_json(node: NodeSnapshot) -> dict:
    """Nested ``{id, key, value, ref, last_access, children}`` for a NodeSnapshot, with the
    fields its type adds (render/views/): today's nodes their lock_ref, hits, priority,
    birth, namespace and page hashes; the host tier's where the KV lives (``tier``), the host
    slots and host references. The tree's views must be loaded (``load_views``)."""
    def entry(current: NodeSnapshot, children: list) -> dict:
        return {"id": current.id, "key": key_json(current.key), "value": list(current.value),
                "ref": current.ref, "last_access": current.last_access, **node_fields(current),
                "parts": parts_json(current), "children": children}
    return fold_up(node, entry)   # bottom-up with a stack: deep chains do not hit the recursion limit


def parts_json(node: NodeSnapshot) -> dict:
    """What a node holds of each declared component: ``{name: {slots, locks}}``, ``slots``
    null for a tombstone (the data gone, the node kept)."""
    return {part.component.name: {"slots": None if part.slots is None else list(part.slots), "locks": part.locks}
            for part in node.parts}


def components_json(pool: PoolSnapshot) -> list:
    """Each component the tree's engine declares, first the backbone: its name, title and
    unit, what the tree holds of it (evictable, protected) and its pool's occupancy."""
    tree, pooled = pool.tree, pool.pooled
    out = []
    for held in tree.held:
        component = held.component
        index = 0 if component is tree.components[0] else (pooled.index(component) + 1 if component in pooled else None)
        shown = None
        if index is not None:
            counts = pool.counts(index)
            free = counts.count(0)
            shown = {"size": len(counts), "used": len(counts) - free, "free": free}
        out.append({"name": component.name, "title": component.title, "unit": component.unit,
                    "evictable": held.evictable, "protected": held.protected, "pool": shown})
    return out


def _engine_fields(tree: TreeSnapshot) -> dict:
    """``engine`` always; the settings the engine has (page size, eviction policy) and what
    the tree's type adds (a protected size, the host pool)."""
    return {"engine": tree.engine, **tree.settings, **tree_fields(tree)}   # the #7 matcher has its own field


def step_json(frame: Frame, describe: Callable[[Frame], str]) -> dict:
    site = locate(frame.source, frame.label)
    return {"step": frame.number, "kind": frame.kind, "text": describe(frame), "label": frame.label,
            "nodes": list(frame.nodes), "file": short_path(site.file) if site.file else site.source,
            "line": site.line, "function": site.function, "source": site.text}


def session_document(session: Session, *, error: ScriptError | None = None, steps: bool = False) -> dict:
    """Everything ``run --json`` prints: the operations applied, the final tree and pool, and the
    error that stopped the run (None when every operation was applied)."""
    ops = []
    for record in session.records:
        op = record.op
        entry = {"op": record.number, "name": op.name, "args": op_args(op), "text": op.text,
                 "line": op.line, "col": op.col, "result": record.result}
        if op.ns is not None:
            entry["ns"] = op.ns
        if record.kv_events:
            entry["kv_events"] = [event.as_dict() for event in record.kv_events]
        if steps:
            entry["steps"] = [step_json(f, describe) for f in session.frames.kept(record.frame_range)]
        ops.append(entry)
    final = session.live_frame()
    tree = final.tree
    load_views(tree)   # the fields of the tree's type (render/views/)
    pool = session.pool
    return {
        "version": SCHEMA_VERSION,
        "matcher": "buggy" if tree.buggy_match else "fixed",
        **_engine_fields(tree),
        "device": str(pool.device),
        "ops": ops,
        "tree": tree_json(tree.root),
        "evictable_size": tree.evictable_size,
        "total_size": tree.total_size,
        "pool": {"size": pool.size, "free": pool.available_size(), "used": pool.used_size()},
        "components": components_json(final.pool),
        "error": None if error is None else {"file": error.file, "line": error.line, "col": error.col,
                                             "message": error.message, "text": str(error)},
    }
