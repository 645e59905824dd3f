"""Plain words for the host tier's steps (engine hicache): what moved where, and why.

``describe_host(frame)`` and ``explain_host(frame)`` answer for the steps only a host-tier
engine takes, and for the shared steps it takes differently (a heap of host leaves, a pop
skipped because a write holds the node); they return None for anything else, and
narrate.py falls back to its own words.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.text import key_text, node_label, slot_ranges
from radixviz.cache.write_policy import LOAD_BACK_THRESHOLD, WRITE_POLICY_SUMMARY

if TYPE_CHECKING:
    from radixviz.script.frames import Frame


def _name(frame: Frame, node_id: int) -> str:
    return node_label(frame.tree, node_id)


def describe_host(frame: Frame) -> str | None:
    """One line for a host-tier step, or None (not one of them)."""
    d, kind, step = frame.data, frame.kind, frame.label
    first = _name(frame, frame.nodes[0]) if frame.nodes else ""
    if kind == "write" and d.get("issued"):
        why = ("evicted under write_back" if d["write_back"] else
               f"hit count {d['hit_count']} reached {d['policy']}'s threshold {d['threshold']}")
        lock = "" if d["write_back"] else "; the node stays locked until the copy is acknowledged"
        return (f"write {first} to the host ({why}): host slots {slot_ranges(d['host_slots'])}, "
                f"copy started{lock}")
    if kind == "write":
        return (f"no room on the host for {first}'s {d['tokens']} tokens ({d['host_free']} free): "
                "evict host leaves first")
    if kind == "ack":
        what = "write to the host" if d["transfer"] == "write" else "load to the device"
        then = "unlock it" if d["unlocked"] else "no lock to drop (write_back)"
        return f"the {what} of {first} is acknowledged: {then}"
    if kind == "demote":
        return (f"free {first}'s device slots {slot_ranges(d['slots'])}; its host copy "
                f"{slot_ranges(d['host_slots'])} stays (evicted and backed up)")
    if kind == "host_free":
        return f"free {first}'s host slots {slot_ranges(d['host_slots'])}: its KV is gone from both tiers"
    if kind == "refill":
        return f"{first} was on the host only: the insert gives it device slots {slot_ranges(d['slots'])}"
    if kind == "host_hit" and step == "match.host_hit":
        return f"{first} is on the host only: {d['tokens']} more token(s) hit there ({d['total']} so far)"
    if kind == "host_hit":
        return f"{first} is on the host only: it joins the stretch to load back"
    if kind == "load" and d.get("started"):
        return f"start copying {d['tokens']} token(s) from host to device"
    if kind == "load" and d.get("issued"):
        return (f"load {first} back: device slots {slot_ranges(d['slots'])} from host "
                f"{slot_ranges(d['host_slots'])}")
    if kind == "load":
        return f"no room on the device for {d['tokens']} token(s) ({d['free']} free): evict to make room"
    if kind == "heap" and d.get("tier") == "host":
        return f"line up {len(frame.nodes)} host-only leaf/leaves by the {d['policy']} key"
    if kind == "heap" and d.get("writing"):
        return (f"line up {len(frame.nodes)} unlocked leaf/leaves by the {d['policy']} key; "
                f"{d['writing']} node(s) locked by a write in flight are not among them")
    if kind == "push_parent" and step == "evict_host.push_parent":
        return f"{first} has no children left and is on the host only: it joins the host heap"
    if kind == "push_parent" and d.get("key") is not None and frame.nodes:
        node = frame.tree.nodes.get(frame.nodes[0])
        if node is not None and not node.key:
            return "every child of the root is off the device: the root joins the heap (its lock will stop it)"
        return f"every child of {first} is off the device: it joins the heap, key {d['key']}"
    if kind == "pop" and d.get("tier") == "host":
        return f"pop host leaf {first}: the smallest {d['policy']} key"
    if kind == "skip" and d.get("tier") == "host":
        return f"skip {first}: {d['ref']} host reference(s) protect its host copy"
    if kind == "skip" and d.get("writing"):
        return f"skip {first}: locked by its write to the host, still in flight"
    if kind == "skip":
        return f"skip {first}: lock_ref {d['ref']} (in use)"
    if kind == "pop" and d.get("is_root"):
        return "the heap reached the root: nothing left to evict"
    if kind == "delete" and d.get("tier") == "host":
        return f"remove host leaf {key_text(d['key'])} from the tree"
    if kind == "evictable" and d.get("why") == "loaded":
        return f"evictable size {d['old']} → {d['new']} (loaded back onto the device)"
    if kind == "result":
        return _result(frame)
    if kind == "auto_sync":
        return ("auto-sync on: copies in flight are acknowledged before each operation" if d["mode"] == "on"
                else "auto-sync off: copies stay in flight until you sync")
    if kind == "write_policy":
        return f"write policy {d['policy']}: {WRITE_POLICY_SUMMARY[d['policy']]}"
    if kind == "head_bugs":
        return (f"SGLang's 9fbe6800a lines are back for: {', '.join(d['bugs'])}" if d["bugs"]
                else "both host-tier fixes on: radixviz's lines, not 9fbe6800a's")
    if kind == "host_size":
        return f"host size {d['host_size']}: a fresh, empty cache with a host pool of {d['host_size']} tokens"
    if kind == "visit" and step == "sync.wait":
        return f"sync: wait for {d['writes']} write(s) and {d['loads']} load(s) in flight"
    return None


def _result(frame: Frame) -> str | None:
    d, step = frame.data, frame.label
    if step == "match.result":
        host = f", then {d['host_hit_length']} on the host only" if d["host_hit_length"] else ""
        return f"match_prefix returns {d['matched']} token(s) on the device: slots {slot_ranges(d['slots'])}{host}"
    if step == "sync.result":
        return f"sync acknowledged {d['acknowledged']} copy/copies"
    if step == "load.result":
        return f"load_back returns {d['loaded']} device slots: {slot_ranges(d['slots'])}"
    if step == "load.skip":
        return (f"load_back returns None: {d['tokens']} token(s) is below the threshold of "
                f"{d['threshold']}, cheaper to recompute")
    if step == "load.no_room":
        return f"load_back returns None: no room for {d['tokens']} token(s) even after evicting"
    if step == "write.no_room":
        return f"the write of {d['tokens']} token(s) is dropped: no room on the host"
    if step == "evict_host.assert":
        return (f"that node was deleted already: host slots {slot_ranges(d['host_slots'])} were freed "
                "a second time, and SGLang's assert (hiradix_cache.py:994) stops here")
    if step == "evict.assert":
        return ("that node came off the heap a second time with no device slots left: "
                "SGLang's evict_device(None) stops here")
    if step == "evict_host.result":
        return f"evict_host freed {d['evicted']} host token(s) of the {d['target']} asked for"
    if step == "evict.result":
        return f"evict freed {d['evicted']} device token(s) of the {d['target']} asked for"
    return None


_WHY_HOST = {
    "write": "A write copies a node's KV from the device to host memory. The host slots are taken "
             "at once and the copy runs beside the scheduler; until it is acknowledged the node is "
             "locked (write-through), so eviction cannot free the slots being read.",
    "ack": "The scheduler checks its copies at the start of every round (here: sync, or auto-sync "
           "before each operation). A finished write releases its lock; a finished load releases "
           "the lock that kept the loaded path in place.",
    "demote": "This node has a host copy, so eviction only frees its device slots. It stays in the "
              "tree, evicted and backed up both: a later match finds it as a host hit.",
    "host_free": "Host eviction deletes host-only leaves nobody protects, policy order first. Now the "
                 "KV must be recomputed if it is asked for again.",
    "refill": "The request recomputed KV the tree only had on the host. The node takes the new device "
              "slots instead of loading the old ones; its host copy stays.",
    "host_hit": "A node with no device copy still matches: its tokens count as a host hit, to be "
                "loaded back (if long enough) instead of recomputed.",
    "load": f"Loading back copies a host-only stretch to new device slots, all of it or none: "
            f"below {LOAD_BACK_THRESHOLD} tokens recomputing is cheaper. The path stays locked "
            f"until the load is acknowledged.",
    "auto_sync": "Copies are asynchronous: issued at one step, acknowledged at a later check. With "
                 "auto-sync off you choose when that check comes, and can let an eviction come first.",
    "write_policy": "The write policy decides when a node is copied to the host: at its first hit, "
                    "its second, or only when eviction would otherwise lose it.",
    "host_size": "A new host pool size starts a fresh cache: both tiers empty.",
    "head_bugs": "SGLang's hiradix_cache.py at 9fbe6800a has two write_back bugs radixviz fixes: "
                 "load-back can evict the host copy it is loading, and a host leaf may still have "
                 "a child. This switch brings SGLang's own lines back, to watch what they do.",
}


def explain_host(frame: Frame) -> str | None:
    """A few sentences for a host-tier step, or None (narrate.py's own words apply)."""
    if frame.kind == "skip" and frame.data.get("writing"):
        return ("A write in flight holds its node locked. Eviction came before the write was "
                "acknowledged, so it must pass over the node and free something else, or less.")
    if frame.kind == "pop" and frame.data.get("backuped") is not None:
        return ("The leaf with the smallest key comes off the heap: a node with a host copy will "
                "only lose its device slots; one without is deleted (under write_back, written first).")
    return _WHY_HOST.get(frame.kind)
