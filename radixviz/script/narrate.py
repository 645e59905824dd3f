"""Plain words for every step: a one-line log entry and a short 'why'."""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.engines import engine_spec
from radixviz.cache.evict_policy import POLICY_SUMMARY
from radixviz.cache.text import key_text, node_label, slot_ranges, slot_runs  # noqa: F401 (the one formatter)

from .kv_text import event_line
from . import ops as engine_words   # an engine's own words for its steps (script/ops/)

if TYPE_CHECKING:
    from radixviz.cache import NodeSnapshot, TreeSnapshot
    from .frames import Frame


def node_namespace(tree: TreeSnapshot, node: NodeSnapshot):
    """The namespace (extra key) ``node`` of snapshot ``tree`` lives in: None for an engine
    without namespaces and for keys outside any."""
    return node.extra_key if engine_words.ops_class(engine_spec(tree.engine)).takes_namespace else None


def node_name(frame: Frame, node_id: int | None) -> str:
    """How a step's line names node ``node_id`` of the frame's tree (engines' words use it too)."""
    return _node(frame, node_id)


def _node(frame: Frame, node_id: int | None) -> str:
    return node_label(frame.tree, node_id)


def describe(frame: Frame) -> str:
    """One line: what this step did."""
    d, kind = frame.data, frame.kind
    line = engine_words.describe(frame)
    if line is not None:
        return line
    first = frame.nodes[0] if frame.nodes else None
    if kind == "op":
        return f"▶ {d['text']}"
    if kind == "alloc":
        return f"allocate {len(d['slots'])} pool slots: {slot_ranges(d['slots'])}"
    if kind == "free_dup":
        return f"free {len(d['slots'])} duplicate slots {slot_ranges(d['slots'])}: the tree already has their tokens"
    if kind == "visit":
        return f"step onto {_node(frame, first)} (last access → {frame.tree.nodes[first].last_access})"
    if kind == "compare":
        node = frame.tree.nodes[first]
        pages = f" = {d['pages']} whole page(s) of {d['page_size']}" if d.get("page_size", 1) > 1 else ""
        return f"compare edge {key_text(node.key)} with the key: {d['common']} token(s) in common{pages}"
    if kind == "split":
        upper, lower = frame.nodes
        return (f"split after {d['at']} tokens: {_node(frame, upper)} above {_node(frame, lower)}")
    if kind == "append":
        extra = " — only part of the edge, yet the walk goes on below (pre-#7)" if d.get("partial") else ""
        return f"take slots {slot_ranges(d['slots'])} of {_node(frame, first)}{extra}"
    if kind == "create":
        return (f"create leaf {_node(frame, first)} ({d['length']} tokens): no request holds it, "
                "so the next step counts it evictable")
    if kind == "evictable":
        why = {"created": "new unreferenced node", "locked": "first lock on the node",
               "unlocked": "last lock released", "deleted": "leaf deleted"}[d["why"]]
        return f"evictable size {d['old']} → {d['new']} ({why})"
    if kind == "heap" and "policy" in d:
        keys = ", ".join(f"{_node(frame, i)} {_key(k)}" for i, k in d["keys"][:4])
        more = " …" if len(d["keys"]) > 4 else ""
        return f"line up {len(frame.nodes)} unlocked leaf/leaves by the {d['policy']} key: {keys}{more}"
    if kind == "pop" and "policy" in d:
        return f"pop {_node(frame, first)}: the smallest {d['policy']} key, {_key(d['key'])}"
    if kind == "push_parent" and "key" in d:
        return f"{_node(frame, first)} has no children left and no lock: a candidate, key {_key(d['key'])}"
    if kind == "page_cut":
        return f"cut the key to whole pages of {d['page_size']}: keep {d['kept']}, drop {key_text(d['dropped'])}"
    if kind == "hit":
        return f"hit count of {_node(frame, first)}: {d['old']} → {d['new']}"
    if kind == "priority":
        return f"priority of {_node(frame, first)} raised {_priority(d['old'])} → {d['new']}"
    if kind == "kv_event":
        return f"KV event: {event_line(d['event'])}"
    if kind == "events":
        return f"KV events {d['kv_events']}: a fresh, empty 2026 cache" + (
            " that reports every page it stores and frees" if d["kv_events"] == "on" else "")
    if kind == "free_tail":
        return (f"free {len(d['slots'])} slot(s) {slot_ranges(d['slots'])}: "
                f"a partial page of {d['page_size']} is not cached")
    if kind == "engine":
        spec = engine_spec(d["engine"])
        return ", ".join((f"engine {spec.name}: {spec.title}", *spec.words(d))) + " (empty)"
    if kind == "page_size":
        return f"page size {d['page_size']}: a fresh, empty 2026 cache"
    if kind == "eviction":
        return f"eviction policy {d['policy']}: {POLICY_SUMMARY[d['policy']]}"
    if kind == "heap":
        return f"collect {len(frame.nodes)} leaf/leaves into a heap ordered by last access"
    if kind == "pop":
        if d["is_root"]:
            return "the heap reached the root: nothing left to evict"
        return f"pop least recently used leaf {_node(frame, first)}"
    if kind == "skip":
        return f"skip {_node(frame, first)}: {d['ref']} reference(s) still hold it"
    if kind == "free":
        component = d.get("component")   # a further component's free names it, its slots under its key
        if component is not None:
            touched = next((c.touched for c in frame.tree.components if c.name == component), "slots")
            return f"free {component} slots {slot_ranges(d[touched])} ({d['freed']} back in its pool)"
        return f"free slots {slot_ranges(d['slots'])} ({d['freed']} back in the pool)"
    if kind == "delete":
        return f"remove leaf {key_text(d['key'])} from the tree"
    if kind == "push_parent":
        return f"{_node(frame, first)} has no children left: it joins the heap"
    if kind == "ref":
        return f"reference count of {_node(frame, first)}: {d['old']} → {d['new']}"
    if kind == "result":
        return _describe_result(frame)
    if kind == "matcher":
        return "matcher is now " + ("BUGGY: the pre-#7 walk" if d["mode"] == "buggy" else "fixed (#7)")
    if kind == "insert_slots":
        return ("inserts now keep one slot fewer than their tokens, as the release's scheduler did (#4)"
                if d["mode"] == "release" else "inserts keep one slot per token (the #4 fix)")
    if kind == "reset":
        return "reset: empty tree, every pool slot free"
    words = _declared(frame)   # a kind the engine declares (its registry line's ``kinds``)
    if words is not None:
        on = f" {_node(frame, first)}" if first is not None else ""
        return f"{kind}{on}: {words}"
    return kind


def _declared(frame: Frame) -> str | None:
    """The words the frame's engine declares for its own kind of step, or None."""
    return engine_spec(frame.tree.engine).kinds.get(frame.kind)


def _key(key) -> str:
    return str(key) if not isinstance(key, tuple) else "(" + ", ".join(map(str, key)) + ")"


def _priority(value: int) -> str:
    return "lowest" if value < -10**9 else str(value)  # the root starts below every priority


def _describe_result(frame) -> str:
    d, op = frame.data, frame.event.op if frame.event is not None else ""
    if "matched" in d:
        return f"match_prefix returns {d['matched']} token(s): slots {slot_ranges(d['slots'])}"
    if "prefix_len" in d:
        return f"insert returns {d['prefix_len']}: the tree already held {d['prefix_len']} of {d['length']} tokens"
    if "evicted" in d:
        return f"evict freed {d['evicted']} token(s) of the {d['target']} asked for"
    if "delta" in d:
        return f"{op} returns {d['delta']:+d} (change in evictable size)"
    return "done"


_WHY = {
    "op": "A new operation starts. Predict what it will do before you step on.",
    "alloc": "As in the scheduler, the request's tokens get fresh KV slots first and the tree is told about "
             "them afterwards. When the pool is short, radixviz evicts just the missing slots; the release's "
             "scheduler asked the tree to evict the whole number of new tokens whenever the free slots fell short.",
    "free_dup": "insert returned how many leading tokens the tree already held. Their KV exists twice now, "
                "so the request's copies go back to the pool and the tree keeps its own.",
    "visit": "Every node the walk stands on gets a fresh access time. Eviction later removes the leaves "
             "that were touched longest ago.",
    "compare": "Sibling edges start with different tokens, so at most one child can share a prefix with "
               "the key. Counting the tokens in common decides what happens next.",
    "split": "The key and the edge part ways inside the edge. A new node takes the shared front part (and its "
             "slots, and the old node's reference count); the old node keeps the rest below it.",
    "append": "The matched node's slots join the answer. With the fixed matcher a node is taken whole, or "
              "split first so that it can be.",
    "create": "The tokens the tree did not have become a new leaf holding their slots. Nothing references "
              "it yet, so it counts as evictable right away.",
    "evictable": "The cache keeps a running total of tokens in unreferenced nodes. The scheduler reads it to "
                 "know how much memory it could reclaim.",
    "heap": "Only leaves can go: an inner node's KV is the prefix of everything below it. The leaves are "
            "ordered by last access, oldest first.",
    "pop": "The oldest leaf comes off the heap; if it is still in use it will be skipped.",
    "skip": "A running request's lock holds this leaf, so its KV must stay. It is dropped from the heap, "
            "not put back.",
    "free": "The leaf's slots go back to the pool through the callback the caller passed in.",
    "delete": "The leaf leaves the tree; its tokens no longer count as evictable.",
    "push_parent": "Removing its last child made the parent a leaf, so it can be evicted too if more room "
                   "is needed.",
    "ref": "Locks count every request on the path: a node is evictable only when its count is back to 0.",
    "result": "The call returns; the scheduler acts on this value.",
    "matcher": "The switch swaps two lines of the matcher: how it treats a match that stops inside an edge.",
    "insert_slots": "Before #4 the scheduler inserted input + output as the key but only the slots whose K/V "
                    "were computed, one fewer: the last token is the one just sampled. The tree took "
                    "that value as it was, so slots and tokens stop lining up and the evictable count "
                    "drifts.",
    "reset": "A fresh, empty cache on a fresh pool.",
}


# the words of the steps a session takes itself (no engine event): a setting changed, a tail
# freed; every engine's (an engine's own events are explained by its script module, ops/)
_WHY_STEPS = {
    "free_tail": "Today's callers insert whole pages only: the last partial page's slots go back to the pool.",
    "engine": "A different engine starts on an empty tree and a fresh pool.",
    "page_size": "Pages change how the tree is cut, so a new page size starts from an empty tree.",
    "eviction": "The same candidates, ordered by another key from now on.",
    "events": "KV events are fixed when a cache starts, so switching them starts an empty tree.",
}


def explain(frame: Frame) -> str:
    """A few sentences: why this step happens."""
    why = engine_words.explain(frame)
    if why is not None:
        return why
    if frame.kind in _WHY_STEPS and frame.event is None:
        return _WHY_STEPS[frame.kind]
    return _WHY.get(frame.kind) or _declared(frame) or ""
