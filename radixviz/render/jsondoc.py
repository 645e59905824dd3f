"""The JSON document of ``radixviz run --json`` (schema: docs/json-schema.md).

Built from the session's records and a final snapshot, so it says exactly what the engine did.
"""
from __future__ import annotations

from radixviz.cache.engines import engine_spec
from radixviz.script.narrate import describe

from .source_map import locate, short_path

SCHEMA_VERSION = 2   # 2: operations and steps are numbered from 1 ("op", "step")


def key_json(key):
    """A string when every token is a character (``"Hello"``), else a list of tokens."""
    if all(isinstance(t, str) and len(t) == 1 for t in key):
        return "".join(key)
    return list(key)


def op_args(op) -> list:
    """``op.args`` as JSON: a key as ``key_json`` writes it, a count or matcher mode as is."""
    return [key_json(arg) if isinstance(arg, tuple) else arg for arg in op.args]


def tree_json(node, node_stats: bool = False, namespaces: bool = False, host_tier: bool = False) -> dict:
    """Nested ``{id, key, value, ref, last_access, children}`` for a NodeSnapshot; with
    ``node_stats`` (an engine whose nodes count them) also lock_ref, hits, priority, birth;
    with ``namespaces`` (an engine whose keys carry them) the namespace and page hashes;
    with ``host_tier`` where the KV lives (``tier``), the host slots and host references."""
    # built bottom-up with an explicit stack so deep chains do not hit the recursion limit
    done: dict = {}
    stack = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if not expanded:
            stack.append((current, True))
            stack.extend((c, False) for c in current.children)
            continue
        entry = {"id": current.id, "key": key_json(current.key), "value": list(current.value),
                 "ref": current.ref, "last_access": current.last_access}
        if node_stats:  # ref is the node's lock_ref
            entry.update(lock_ref=current.ref, hit_count=current.hit_count,
                         priority=current.priority, creation_time=current.creation_time)
        if namespaces:
            hashes = current.hash_value
            entry.update(extra_key=current.extra_key,
                         hash_value=None if hashes is None else list(hashes))
        if host_tier and current.key:
            entry.update(tier=current.tier, in_flight=current.in_flight or None, evicted=current.evicted,
                         backuped=current.backuped, host_value=None if current.host_value is None
                         else list(current.host_value), host_ref=current.host_ref)
        entry["children"] = [done.pop(c.id) for c in current.children]
        done[current.id] = entry
    return done[node.id]


def _engine_fields(tree) -> dict:
    """``engine`` always; the settings the engine has (page size, eviction policy) and its
    protected size where it counts one."""
    spec = engine_spec(tree.engine)
    fields = {"engine": tree.engine, **tree.settings}   # the #7 matcher has its own field
    if spec.node_stats:
        fields["protected_size"] = tree.protected_size
    if spec.host_tier:
        fields["host_pool"] = {"size": tree.host_size, "used": tree.host_used,
                               "free": tree.host_size - tree.host_used}
        fields["in_flight"] = {"writes": tree.writes_in_flight, "loads": tree.loads_in_flight}
        fields["head_bugs"] = list(tree.head_bugs)
        if tree.head_bugs:   # what SGLang's 9fbe6800a lines did to the tree and the host pool
            fields["head_bug_damage"] = {"unreachable": [n[0] for n in tree.unreachable],
                                         "double_freed": list(tree.double_freed),
                                         "reports": list(tree.reports), "host_accounting": tree.host_accounting}
    return fields


def step_json(frame, describe) -> dict:
    site = locate(frame.source, frame.label)
    return {"step": frame.number, "kind": frame.kind, "text": describe(frame), "label": frame.label,
            "nodes": list(frame.nodes), "file": short_path(site.file) if site.file else site.source,
            "line": site.line, "function": site.function, "source": site.text}


def session_document(session, *, error=None, steps: bool = False) -> dict:
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
    tree = session.cache.snapshot()
    pool = session.pool
    return {
        "version": SCHEMA_VERSION,
        "matcher": "buggy" if tree.buggy_match else "fixed",
        **_engine_fields(tree),
        "device": str(pool.device),
        "ops": ops,
        "tree": tree_json(tree.root, engine_spec(tree.engine).node_stats, engine_spec(tree.engine).namespaces,
                          engine_spec(tree.engine).host_tier),
        "evictable_size": tree.evictable_size,
        "total_size": tree.total_size,
        "pool": {"size": pool.size, "free": pool.available_size(), "used": pool.used_size()},
        "error": None if error is None else {"file": error.file, "line": error.line, "col": error.col,
                                             "message": error.message, "text": str(error)},
    }
