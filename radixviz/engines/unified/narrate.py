"""Plain words for the unified tree's steps (engine unified): which component said what of a
node, which one cut a match and why, what a tombstone, a cascade, a recovered window and a
copied state are. ``describe(frame)`` and ``explain(frame)`` answer by the step's label
(each ``# step:`` of the wing's files); None leaves a step to narrate.py's shared words.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.text import key_text, node_label, slot_ranges

if TYPE_CHECKING:
    from radixviz.script.frames import Frame

COMPONENT_WORDS = {"full": "Full KV", "swa": "SWA KV", "mamba": "Mamba state"}


def _name(frame: Frame, index: int = 0) -> str:
    return node_label(frame.tree, frame.nodes[index]) if len(frame.nodes) > index else "the root"


def _what(component: str) -> str:
    return COMPONENT_WORDS.get(component, component)


def _verdicts(d) -> str:
    why = dict(d["reasons"])
    return ", ".join(f"{c} ✓" if ok else f"{c} ✗ ({why.get(c, 'refused')})" for c, ok in d["verdicts"])


def _slots(frame: Frame) -> str:
    d = frame.data
    for key in ("swa_slots", "mamba_slots", "slots"):
        if key in d:
            return slot_ranges(d[key])
    return ""


def _match_result(d) -> str:
    line = f"match_prefix returns {d['matched']} token(s)"
    if d["full_hit"] > d["matched"]:
        why = " and ".join(f"{c} ({reason})" for c, reason in d.get("reasons", ())) or "a node above"
        line += f"; the Full KV held {d['full_hit']}, cut by {why}"
    return line


def _evict_result(d) -> str:
    done = ", ".join(f"{n} {_what(c)}" for c, n in d["evicted"] if n) or "nothing"
    return f"evict freed {done}"


def _tombstone(frame: Frame, what: str, called: str) -> str:
    node = frame.tree.nodes.get(frame.nodes[0]) if frame.nodes else None
    if node is not None and not node.children:   # a leaf gives up every component, then goes
        return f"{_name(frame)} gives up its {what} (the leaf is leaving the tree)"
    return f"{_name(frame)} loses its {what} and stays: {called}"


def _free(frame: Frame) -> str:
    d, label = frame.data, frame.label
    if label == "insert.free_dup":
        own = f" ({d['full_only']} of them Full only: the request gave up their SWA KV)" if d["full_only"] else ""
        return f"free the request's duplicate slots {slot_ranges(d['slots'])}: the tree holds these tokens{own}"
    if label == "evict.free":
        unit = "state" if d["component"] == "mamba" else "slot(s)"
        return f"{_name(frame)} gives up its {_what(d['component'])} ({d['freed']} {unit})"
    if label == "pool.free":
        peers = f" and SWA peers {slot_ranges(d['swa_slots'])}" if d.get("swa_slots") else ""
        return f"Full slots {slot_ranges(d['slots'])}{peers} go back to their pools"
    if label == "pool.free_full":
        return f"Full slots {slot_ranges(d['slots'])} go back (their SWA KV was gone already)"
    return f"{_what(d['component'])} slots {_slots(frame)} go back to the {d['component']} pool"


_BY_LABEL = {
    "match.validate": lambda f: f"judge {_name(f)}: {_verdicts(f.data)}",
    "match.take": lambda f: f"walk past {_name(f)}: Full slots {slot_ranges(f['slots'])} (returned only if a node "
                            "at or below it is accepted)",
    "match.best": lambda f: f"{_name(f)} suits every component: the match reaches it ({f['matched']} tokens)",
    "match.stamp": lambda f: f"stamp the path down to {_name(f)} as just used",
    "match.branch": lambda f: "branching point: " + "; ".join(
        w for w in (f"keep a window up to token {f['swa']}" if f["swa"] is not None else "",
                    f"keep a state at token {f['mamba']}" if f["mamba"] is not None else "") if w),
    "match.result": lambda f: _match_result(f.data),
    "match.mamba.copy": lambda f: (f"copy the Mamba state of {_name(f)} (slot {f['src']}) into the "
                                   f"request's slot {f['dst']}"),
    "insert.priority": lambda f: f"priority of {_name(f)} raised to {f['new']}",
    "insert.hit": lambda f: f"hit count of {_name(f)}: now {f['new']}",
    "insert.create": lambda f: (f"create leaf {_name(f)} ({f['length']} tokens) with Full slots "
                                f"{slot_ranges(f['slots'])}"),
    "insert.swa.window_split": lambda f: f"split after {f['at']} tokens: the request's window starts there",
    "insert.swa.cap_leaf": lambda f: f"split the new leaf after {f['at']} tokens: its last part is one window",
    "insert.swa.state": lambda f: f"{_name(f)} gets SWA KV {slot_ranges(f['swa_slots'])}",
    "insert.swa.state_locked": lambda f: (f"{_name(f)} gets SWA KV {slot_ranges(f['swa_slots'])} "
                                          "(its Full slots stay: locked)"),
    "insert.swa.recover": lambda f: f"{_name(f)} was an SWA tombstone inside the request's window: it takes the "
                                    f"request's slots {slot_ranges(f['new'])}",
    "insert.swa.recover_locked": lambda f: f"{_name(f)} was an SWA tombstone inside the request's window: it keeps "
                                           f"its locked Full slots and takes the request's SWA KV",
    "insert.mamba.state": lambda f: f"{_name(f)} keeps the request's Mamba state (slot {f['slot']})",
    "insert.mamba.branch_state": lambda f: f"{_name(f)} had no state: it keeps the request's (slot {f['slot']})",
    "insert.mamba.exists": lambda f: (f"{_name(f)} keeps a state already: the request's (slot {f['unused']}) "
                                      "is not taken"),
    "insert.result": lambda f: f"insert returns {f['prefix_len']}: the tree held {f['prefix_len']} token(s) already",
    "lock.swa.stamp": lambda f: (f"the window lock covers {f['covered']} tokens at {_name(f)}: "
                                 f"stamp #{f['uuid']} marks its start"),
    "lock.result": lambda f: "inc_lock_ref returns a receipt: " + (
        ", ".join(f"{c} up to stamp #{u}" if u else c for c, u in f["uuids"]) or "full"),
    "unlock.result": lambda f: "dec_lock_ref replayed the receipt: every lock it named is released",
    "evict.start": lambda f: f"evict {_what(f['component'])}: {f['target']} to go ({f['done']} freed already)",
    "evict.pick": lambda f: (f"the least recent unlocked {_what(f['component'])}: {_name(f)}, "
                             + ("a leaf: it goes whole" if f["leaf"] else "inside the tree")),
    "evict.full.pop": lambda f: f"pop {_name(f)}: the unlocked leaf with the smallest {f['policy']} key",
    "evict.swa.tombstone": lambda f: _tombstone(f, "SWA KV", "an SWA tombstone"),
    "evict.mamba.tombstone": lambda f: _tombstone(f, "Mamba state", "a Mamba tombstone"),
    "evict.cascade": lambda f: f"{_name(f)}'s {_what(f['component'])} goes with its {_what(f['trigger'])}",
    "evict.result": lambda f: _evict_result(f.data),
}


def describe(frame: Frame) -> str | None:
    """One line for a unified step, or None (narrate.py's shared words serve)."""
    d, kind, label = frame.data, frame.kind, frame.label
    if frame.event is None:
        if kind == "page_size":
            return f"page size {d['page_size']}: a fresh, empty unified tree"
        if kind == "events":
            return f"KV events {d['kv_events']}: a fresh, empty unified tree" + (
                " that reports each Full KV page it stores and frees (SWA and Mamba send nothing, as in "
                "v0.5.23)" if d["kv_events"] == "on" else "")
        if kind == "option":
            return ", ".join(f"{k.replace('_', ' ')} {v if not isinstance(v, tuple) else ','.join(v)}"
                             for k, v in d.items()) + ": a fresh, empty unified tree"
        return None
    words = _BY_LABEL.get(label)
    if words is not None:
        return words(frame)
    if kind == "compare":
        pages = f" (whole pages of {d['page_size']})" if d.get("page_size", 1) > 1 else ""
        node = frame.tree.nodes.get(frame.nodes[0])
        edge = key_text(node.key) if node is not None else "the edge"
        return f"compare edge {edge} with the key: {d['common']} token(s) in common{pages}"
    if kind == "free":
        return _free(frame)
    if kind == "ref":
        return f"{d['component']} lock of {_name(frame)}: {d['old']} → {d['new']}"
    return None


WHY_STEP = {
    "match.validate": "The walk follows the Full KV as far as the key goes. At each node every component "
                      "says whether a match may end there: Full if the node holds its KV; SWA if the "
                      "tokens since the last SWA tombstone fill a window; Mamba if a state was kept at "
                      "the node's end.",
    "match.take": "The walk follows the Full KV as far as the key goes, collecting each node's slots. A "
                  "match returns them only up to the deepest node every component accepts.",
    "match.best": "A match ends at the deepest node every component accepted: this node and the ones the "
                  "walk passed above it are now what it returns. Full KV the walk passes below the last "
                  "such node is KV the request cannot use.",
    "match.stamp": "The matched node and its ancestors get a fresh access time, each a little older than "
                   "its child. The SWA and Mamba LRU lists move the nodes the request reads to their "
                   "recent end.",
    "match.branch": "When the Full KV reaches past the reusable prefix, the request should keep a window "
                    "or a state at this point on its way through, so the next request with this prefix "
                    "can reuse more.",
    "match.result": "The request reuses the tokens up to the deepest node all components accepted and "
                    "computes the rest.",
    "match.mamba.copy": "A recurrent state sums up every token before it, and the request will change it "
                        "as it runs. So it runs on a copy in a slot of its own (copy-on-write); the tree's "
                        "state stays for the next request.",
    "insert.free_dup": "The tree already holds these tokens. Past the prefix the request matched, its own "
                       "copies go back to the pool.",
    "insert.swa.window_split": "A tombstone straddles the point where the request's window starts: it is "
                               "cut there so the part inside the window can get its SWA KV back.",
    "insert.swa.cap_leaf": "A lock on this leaf will hold its SWA KV. Cutting the leaf so its last part "
                           "is one window keeps that lock to one window, not the whole leaf.",
    "insert.mamba.exists": "A node keeps one state. It has one already, so the request's state slot goes "
                           "back to the request.",
    "lock.swa.stamp": "An SWA lock holds only one window up from the node. The node where the window "
                      "begins gets a stamp; the receipt keeps it, so the release stops at the same node "
                      "even after splits.",
    "lock.result": "The receipt says what the lock took (which components, and where the window ends). "
                   "The release must be given it back.",
    "evict.start": "Each component evicts on its own until its own count is met: Full takes whole "
                   "unlocked leaves by the policy's key; SWA and Mamba walk their LRU lists from the "
                   "least recently used unlocked node.",
    "evict.pick": "A leaf goes whole, every component's data with it. A node inside the tree loses only "
                  "this component's data and stays.",
    "evict.cascade": "Losing a component's data takes the data of lower components on the node with it: "
                     "Full before SWA before Mamba. A state below a broken window could never be matched "
                     "again, so it goes too.",
    "evict.result": "The call returns what each component freed.",
}
WHY_KIND = {
    "alloc": "As in the scheduler, the request's tokens get fresh slots first and the tree is told about "
             "them afterwards. When a pool is short, the tree is asked to free just the missing slots, as "
             "v0.5.23's allocator asks (evict_to_free_tokens evicts the shortfall; the first release and "
             "March's code asked for all the new tokens).",
    "tombstone": "The node stays in the tree with its Full KV; only this component's data left. A match "
                 "can pass through it, but SWA needs a whole window below it and Mamba a state at the "
                 "node where the match ends.",
    "recover": "The request computed these tokens' SWA KV and still holds it (they are inside its window), "
               "so the tombstone gets it back instead of the request freeing it.",
    "state": "The node keeps this component's data from now on: SWA KV for its tokens, or the request's "
             "Mamba state at its end.",
    "ref": "Each component counts its own locks. Full locks the node and every ancestor; SWA locks up "
           "until a window is covered; Mamba locks the node alone.",
    "split": "The edge is cut in two. Full and SWA KV are shared out by position; the upper half keeps no "
             "Mamba state, since a state belongs to the end of the edge.",
}


def explain(frame: Frame) -> str | None:
    """Why a unified step happens, or None (narrate.py's words serve)."""
    if frame.event is None:
        if frame.kind == "alloc":
            return WHY_KIND["alloc"]
        return "A different component mix, window or pool starts an empty tree." if frame.kind == "option" else None
    return WHY_STEP.get(frame.label) or WHY_KIND.get(frame.kind)
