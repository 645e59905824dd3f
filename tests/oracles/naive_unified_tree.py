"""A plain re-reading of SGLang v0.5.23's unified tree core and its three components.

Written from the wheel's ``mem_cache/unified_cache/unified_tree_core.py``,
``components/{base,full,swa,mamba}.py`` and ``cache_action.py`` in their shape, not radixviz's:
SGLang's float time counter (one read 1.0, a match's path 0.00001 apart, the LRU lists'
sentinels reading it too), node ids from one counter every node takes (sentinels included),
``ComponentData`` with a ``metadata`` dict, SWA boundary stamps from SGLang's numbering
(1e14 + n), deferred actions as plain tuples, and the insert as its four resumable phases.
It shares no code with ``radixviz``: the differential test runs the two side by side.
Device tier only; the host tier, sessions and KV events are not read here.
"""
from __future__ import annotations

import math
import sys

import torch

from .naive_unified_nodes import FULL, LRU, MAMBA, PRIORITY_KEYS, SWA, Clock, RefNode, child_key, match_len
from .naive_unified_parts import FullComp, MambaComp, SWAComp

DEFERRED = ("free_kv", "free_kv_full_only")


class RefTreeCore:
    def __init__(self, types, page, window, chunk, policy, max_states):
        self.types, self.page = types, page
        self.window, self.max_states = window, max_states
        self.grid = math.lcm(chunk, page) if chunk else None
        self.policy = PRIORITY_KEYS[policy]
        self.clock = Clock()
        makers = {FULL: FullComp, SWA: SWAComp, MAMBA: MambaComp}
        self.comps = [makers[ct](self) for ct in types]
        self.reset()

    def reset(self):
        self.arena = {}
        self.walk = None
        self.root = self.new_node()
        self.root.priority = -sys.maxsize
        self.root.key = []
        self.root.component_data[FULL].value = torch.empty(0, dtype=torch.int64)
        for ct in self.types:
            self.root.component_data[ct].lock_ref = 1
        self.evictable = dict.fromkeys(self.types, 0)
        self.protected = dict.fromkeys(self.types, 0)
        self.lrus = {ct: LRU(ct, self.clock) for ct in self.types}
        self.leaves = set()

    def new_node(self, priority=0):
        node = RefNode(self.clock, priority)
        self.arena[node.id] = node
        return node

    def comp(self, ct):
        return next(c for c in self.comps if c.ct == ct)

    # ---- match

    def match_prefix(self, key):
        if len(key) == 0:
            return self.empty()
        key = key[:len(key) // self.page * self.page]
        if len(key) == 0:
            return self.empty()
        node, offset = self.root, 0
        ck = child_key(key, self.page, 0)
        value, best, best_len, full_hit = [], self.root, 0, 0
        validators = [c.validator() for c in self.comps]
        while offset < len(key) and ck in node.children:
            child = node.children[ck]
            if child.evicted:
                break
            n = match_len(child.key, key, offset, self.page)
            full_hit += n
            if n < len(child.key):
                node = self.split(child.key, child, n)
                value.append(node.component_data[FULL].value)
                if all([v(node) for v in validators]):  # noqa: C419  (every validator sees every node)
                    best, best_len = node, len(value)
                break
            value.append(child.component_data[FULL].value)
            node = child
            if all([v(node) for v in validators]):  # noqa: C419  (every validator sees every node)
                best, best_len = node, len(value)
            offset += n
            if offset < len(key):
                ck = child_key(key, self.page, offset)
        for c in self.comps:
            if c.ct != FULL:
                c.refresh(best, "match_end")
        t = self.clock.read()
        x = best
        while x:
            x.last_access_time = t
            t -= 0.00001
            x = x.parent
        chunks = value[:best_len]
        result = {"device_prefix_len": sum(len(v) for v in chunks), "best": best,
                  "indices": torch.cat(chunks) if chunks else torch.empty(0, dtype=torch.int64),
                  "full_kv_hit_length": full_hit, "swa_branching_seqlen": None, "mamba_branching_seqlen": None}
        for c in self.comps:
            c.finalize(result)
        return result

    def empty(self):
        return {"device_prefix_len": 0, "best": self.root, "indices": torch.empty(0, dtype=torch.int64),
                "full_kv_hit_length": 0, "swa_branching_seqlen": None, "mamba_branching_seqlen": None}

    def touch(self, node):
        node.last_access_time = self.clock.read()

    # ---- split, new leaf, leaves

    def split(self, key, child, n):
        new = self.new_node(child.priority)
        new.children = {child_key(key[n:], self.page): child}
        new.parent = child.parent
        new.key = child.key[:n]
        new.hit_count = child.hit_count
        new.creation_time = child.creation_time
        child.parent = new
        child.key = child.key[n:]
        for c in self.comps:
            c.split(new, child)
        new.parent.children[child_key(key, self.page)] = new
        for ct in self.types:
            if ct != FULL and new.component_data[ct].value is not None and not self.lrus[ct].in_list(new):
                self.lrus[ct].insert_after(child, new)
        child.last_access_time = self.clock.read()
        self.update_leaf(new)
        self.update_leaf(child)
        return new

    def add_leaf(self, parent, key, value, priority):
        new = self.new_node(priority)
        new.parent, new.key = parent, key
        new.component_data[FULL].value = value.clone()
        parent.children[child_key(key, self.page)] = new
        self.evictable[FULL] += len(value)
        self.update_leaf(new)
        self.update_leaf(parent)
        return new

    def set_value(self, node, ct, value):
        cd = node.component_data[ct]
        cd.value = value
        self.lrus[ct].insert_mru(node)
        (self.protected if cd.lock_ref > 0 else self.evictable)[ct] += len(value)

    def is_leaf(self, node):
        if node is self.root or node.evicted:
            return False
        if any(cd.lock_ref > 0 for cd in node.component_data):
            return False
        return not any(c.component_data[FULL].value is not None for c in node.children.values())

    def update_leaf(self, node):
        if self.is_leaf(node):
            self.leaves.add(node)
        else:
            self.leaves.discard(node)

    # ---- locks

    def inc_lock_ref(self, node, skip=()):
        receipt = {"node": node.id, "skipped": tuple(skip), "uuids": {}, "delta": None}
        for c in self.comps:
            if c.ct not in receipt["skipped"]:
                c.lock(node, receipt)
        self.update_leaf(node)
        return receipt

    def dec_lock_ref(self, node, receipt, skip_swa=False):
        assert receipt["node"] == node.id
        swa_prio = self.comp(SWA).priority(False) if skip_swa and SWA in self.types else None
        for c in reversed(self.comps):
            if c.ct in receipt["skipped"]:
                continue
            if swa_prio is not None and (c.ct == SWA or c.priority(False) < swa_prio):
                continue
            c.unlock(node, receipt)
        self.update_leaf(node)


    # ---- insert: WALK -> OVERLAP -> COMMIT -> TAIL, pausing for non-free actions

    def begin_insert(self, params):
        assert self.walk is None
        key = params["key"]
        key = key[:len(key) // self.page * self.page]
        value = params["value"][:len(key)]
        priority = params.get("priority") or 0
        self.touch(self.root)
        self.root.priority = max(self.root.priority, priority)
        if len(key) == 0:
            return [], {"prefix_len": 0, "mamba_exist": True, "last": self.root}
        self.walk = {"phase": "walk", "node": self.root, "key": key, "value": value, "params": params,
                     "priority": priority, "result": {"prefix_len": 0, "mamba_exist": False, "last": None},
                     "total": 0, "new_leaf": False, "target": None, "actions": []}
        return self.advance()

    def advance(self):
        w = self.walk
        while True:
            before = len(w["actions"])
            if w["phase"] == "walk":
                self.walk_step(w)
            elif w["phase"] == "commit":
                self.commit_step(w)
            else:
                self.tail_step(w)
                self.walk = None
                return w["actions"], w["result"]
            fresh = w["actions"][before:]
            if fresh and not all(a[0] in DEFERRED for a in fresh):
                out, w["actions"] = w["actions"], []
                return out, None

    def end_insert(self):
        w, self.walk = self.walk, None
        return w["actions"] if w is not None else []

    def walk_step(self, w):
        key = w["key"]
        ck = child_key(key, self.page) if len(key) else None
        if ck not in w["node"].children:
            w["phase"] = "commit"
            return
        node = w["node"].children[ck]
        self.touch(node)
        n = match_len(node.key, key, 0, self.page)
        if n < len(node.key):
            node = self.split(node.key, node, n)
        node.priority = max(node.priority, w["priority"])
        params = w["params"]
        vslice = w["value"][:n]
        consumed = n
        for c in self.comps:
            consumed = min(consumed, c.overlap(node, n, w["total"], vslice, params, w["actions"]))
        dup_start = max(0, params["prev_prefix_len"] - w["total"])
        if dup_start < consumed:
            dup = vslice[dup_start:consumed]
            swa_gone = min(max(params["evicted"].get(SWA, 0) - (w["total"] + dup_start), 0), dup.numel())
            if swa_gone > 0:
                w["actions"].append(("free_kv_full_only", [dup[:swa_gone]]))
            if swa_gone < dup.numel():
                w["actions"].append(("free_kv", [dup[swa_gone:]]))
        if w["total"] + n > params.get("inserted_len", 0):
            node.hit_count += 1
        w["node"] = node
        w["total"] += n
        w["key"] = w["key"][n:]
        w["value"] = w["value"][n:]

    def commit_step(self, w):
        if len(w["key"]):
            w["target"] = self.add_leaf(w["node"], w["key"], w["value"], w["priority"])
            w["new_leaf"] = True
        else:
            w["target"] = w["node"]
        w["result"]["prefix_len"] = w["total"]
        w["result"]["last"] = w["target"]
        for c in self.comps:
            c.commit(w["target"], w["new_leaf"], w["params"], w["result"], w["actions"])
        w["phase"] = "tail"

    def tail_step(self, w):
        target = w["target"]
        if target is not self.root:
            for c in self.comps:
                if c.ct != FULL:
                    c.refresh(target, "insert_end")
        if w["new_leaf"] and w["total"] + len(target.key) > w["params"].get("inserted_len", 0):
            target.hit_count += 1

    # ---- eviction

    def walk_next(self, ct, tracker):
        frees, actions = {}, []
        copy = dict(tracker)
        node = self.comp(ct).walk_next(copy, frees, actions)
        delta = {k: copy[k] - tracker[k] for k in copy if copy[k] != tracker[k]}
        progress = node is not None or bool(delta) or bool(actions) or any(frees.values())
        return node, delta, frees, actions, progress

    def evict_leaf(self, node):
        assert self.is_leaf(node)
        tracker = dict.fromkeys(self.types, 0)
        frees = {}
        for c in self.comps:
            self.evict_and_detach(node, c, frees, tracker)
        self.leaves.discard(node)
        parent = node.parent
        self.remove_from_parent(node)
        self.update_leaf(parent)
        cur = parent
        while cur != self.root and len(cur.children) == 0:
            if any(cd.lock_ref > 0 for cd in cur.component_data):
                break
            if cur.component_data[FULL].value is not None:
                self.update_leaf(cur)
                break
            for c in self.comps:
                if c.has_data(cur):
                    self.evict_and_detach(cur, c, frees, tracker)
            self.remove_from_parent(cur)
            self.update_leaf(cur.parent)
            cur = cur.parent
        return {k: v for k, v in tracker.items() if v}, frees

    def remove_from_parent(self, node):
        assert node.parent.children.pop(child_key(node.key, self.page)) is node
        self.arena.pop(node.id, None)

    def evict_and_detach(self, node, comp, frees, tracker=None):
        freed = comp.evict(node, frees)
        if tracker is not None:
            tracker[comp.ct] += freed
        lru = self.lrus[comp.ct]
        if lru.in_list(node):
            lru.remove_node(node)
        return freed

    def cascade(self, node, trigger, tracker, frees):
        is_leaf = node in self.leaves
        base = False
        for c in self.comps:
            if c.priority(is_leaf) > trigger.priority(is_leaf):
                continue
            if c is trigger or not c.has_data(node):
                continue
            cd = node.component_data[c.ct]
            if c.priority(False) >= trigger.priority(False) and cd.lock_ref != 0:
                continue
            assert cd.lock_ref == 0
            self.evict_and_detach(node, c, frees, tracker)
            if c.ct == FULL:
                base = True
        if trigger.ct == FULL or base:
            node.component_data[FULL].value = None
        self.update_leaf(node)

    def dec_swa_lock_only(self, node, receipt):
        frees = {}
        assert receipt["node"] == node.id
        if node is self.root or SWA not in self.types:
            return frees
        swa = self.comp(SWA)
        swa.release_window(node, receipt["uuids"][SWA], frees)
        for c in reversed(self.comps):
            if c.ct not in receipt["skipped"] and c.priority(False) < swa.priority(False):
                c.unlock(node, receipt)
        return frees
