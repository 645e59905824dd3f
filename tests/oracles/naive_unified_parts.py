"""The three components of the unified tree's reference (see naive_unified_tree.py), each as
its file in the wheel has it: validator, split, eviction walk and locks."""
from __future__ import annotations

import heapq

from .naive_unified_nodes import FULL, MAMBA, SWA


class FullComp:
    ct = FULL

    def __init__(self, core):
        self.core = core

    def validator(self):
        return lambda node: node.component_data[FULL].value is not None

    def refresh(self, node, phase):
        pass

    def finalize(self, result):
        pass

    def finalize_cache(self, params, result):
        pass

    def overlap(self, node, n, total, vslice, params, actions):
        return n

    def commit(self, node, is_new_leaf, params, result, actions):
        pass

    def priority(self, is_leaf):
        return 0 if is_leaf else 2

    def has_data(self, node):
        return node.component_data[FULL].value is not None

    def split(self, parent, child):
        p, c = parent.component_data[FULL], child.component_data[FULL]
        p.lock_ref = c.lock_ref
        n = len(parent.key)
        if c.value is not None:
            p.value = c.value[:n].clone()
            c.value = c.value[n:].clone()

    def evict(self, node, frees):
        cd = node.component_data[FULL]
        if cd.value is None:
            return 0
        frees.setdefault(FULL, []).append(cd.value)
        self.core.evictable[FULL] -= len(cd.value)
        return len(cd.value)

    def walk_start(self, want):
        key = self.core.policy
        self.want, self.last = want, None
        self.heap = [(key(n), n) for n in self.core.leaves]
        heapq.heapify(self.heap)

    def walk_next(self, tracker, frees, actions):
        core = self.core
        if self.last is not None and self.last.parent is not None and self.last.parent in core.leaves:
            heapq.heappush(self.heap, (core.policy(self.last.parent), self.last.parent))
        self.last = None
        while tracker[FULL] < self.want and self.heap:
            _, x = heapq.heappop(self.heap)
            if x not in core.leaves:
                continue
            self.last = x
            return x
        return None

    def lock(self, node, receipt):
        core, cur, delta = self.core, node, 0
        while cur is not core.root:
            cd = cur.component_data[FULL]
            if cd.lock_ref == 0:
                core.evictable[FULL] -= len(cd.value)
                core.protected[FULL] += len(cd.value)
                delta += len(cd.value)
            cd.lock_ref += 1
            core.leaves.discard(cur)
            cur = cur.parent
        receipt["delta"] = delta

    def unlock(self, node, receipt):
        core, cur = self.core, node
        while cur != core.root:
            cd = cur.component_data[FULL]
            assert cd.lock_ref > 0
            if cd.lock_ref == 1 and cd.value is not None:
                core.evictable[FULL] += len(cd.value)
                core.protected[FULL] -= len(cd.value)
            cd.lock_ref -= 1
            if cd.lock_ref == 0:
                core.update_leaf(cur)
            cur = cur.parent


class SWAComp:
    ct = SWA

    def __init__(self, core):
        self.core = core

    def validator(self):
        state = {"len": float("inf")}
        window = self.core.window

        def check(node):
            if node.component_data[SWA].value is None:
                state["len"] = 0
                return False
            state["len"] += len(node.key)
            return state["len"] >= window
        return check

    def priority(self, is_leaf):
        return 0 if is_leaf else 1

    def has_data(self, node):
        return node.component_data[SWA].value is not None

    def refresh(self, node, phase):
        if phase == "walkdown":
            return
        core = self.core
        core.lrus[SWA].reset_window(node, core.root, core.window + core.page, self.has_data)

    def finalize(self, result):
        page = self.core.page
        aligned = result["full_kv_hit_length"] // page * page
        result["swa_branching_seqlen"] = aligned if aligned > result["device_prefix_len"] else None

    def finalize_cache(self, params, result):
        pass

    # ---- insert

    def segments(self, node, start, end):
        out = []
        while end > start:
            begin = end - len(node.key)
            out.append((node, begin, end))
            end, node = begin, node.parent
        return reversed(out)

    def clip(self, node, start, end, window_start):
        if node.component_data[SWA].value is not None:
            return None
        live = max(start, window_start)
        if live >= end:
            return None
        if live > start:
            self.core.split(node.key, node, live - start)
        return live

    def publish(self, node, actions):
        actions.append(("swa_rebuild", node, node.component_data[FULL].value))

    def recover(self, node, incoming, actions):
        full = node.component_data[FULL]
        old = full.value
        if full.lock_ref > 0:
            actions.append(("swa_recover_locked", node, old, incoming))
            return
        full.value = incoming.clone()
        actions.append(("free_kv_full_only", [old]))
        self.publish(node, actions)

    def overlap(self, node, n, total, vslice, params, actions):
        if params["prev_prefix_len"] >= total + n:
            return n
        window_start = params["evicted"].get(SWA, 0)
        consumed = n
        for frag, start, end in self.segments(node, total, total + n):
            live = self.clip(frag, start, end, window_start)
            if live is None:
                continue
            self.recover(frag, vslice[live - total:end - total], actions)
            consumed = min(consumed, live - total)
        return consumed

    def cap_leaf(self, leaf):
        core = self.core
        if leaf is core.root or leaf.component_data[SWA].lock_ref > 0:
            return None
        tail = (core.window + core.page - 1) // core.page * core.page
        if len(leaf.key) <= tail:
            return None
        at = len(leaf.key) - tail
        if core.page > 1 and (at % core.page or len(leaf.key) % core.page):
            return None
        return core.split(leaf.key, leaf, at)

    def commit(self, node, is_new_leaf, params, result, actions):
        if not is_new_leaf:
            return
        start = result["prefix_len"]
        for frag, s, e in self.segments(node, start, start + len(node.key)):
            live = self.clip(frag, s, e, params["evicted"].get(SWA, 0))
            if live is None:
                continue
            parent = self.cap_leaf(frag)
            if parent is not None:
                self.publish(parent, actions)
            self.publish(frag, actions)

    def split(self, parent, child):
        p, c = parent.component_data[SWA], child.component_data[SWA]
        p.lock_ref = c.lock_ref
        if c.value is not None:
            n = len(parent.key)
            p.value = c.value[:n].clone()
            c.value = c.value[n:].clone()
        else:
            p.value = None
        p.metadata["uuid"] = c.metadata.get("uuid")
        c.metadata.pop("uuid", None)

    # ---- eviction

    def evict(self, node, frees):
        cd = node.component_data[SWA]
        if cd.value is None:
            return 0
        frees.setdefault(SWA, []).append(node.component_data[FULL].value)
        freed = len(cd.value)
        self.core.evictable[SWA] -= freed
        cd.value = None
        return freed

    def walk_start(self, want):
        self.want = want
        self.cursor = self.core.lrus[SWA].lru_unlocked()

    def walk_next(self, tracker, frees, actions):
        core = self.core
        lru = core.lrus[SWA]
        if self.cursor is not None and not lru.in_list(self.cursor):
            self.cursor = lru.lru_unlocked()
        if tracker[SWA] >= self.want or self.cursor is None or not lru.in_list(self.cursor):
            return None
        x = self.cursor
        if x in core.leaves:
            self.cursor = lru.prev_unlocked(x)
            return x
        self.cursor = lru.prev_unlocked(x)
        core.evict_and_detach(x, self, frees, tracker)
        core.cascade(x, self, tracker, frees)
        return None

    # ---- locks

    def lock(self, node, receipt):
        core = self.core
        cur, covered, stamp = node, 0, None
        while cur != core.root and covered < core.window:
            cd = cur.component_data[SWA]
            if cd.lock_ref == 0 and cd.value is not None:
                core.evictable[SWA] -= len(cd.value)
                core.protected[SWA] += len(cd.value)
            cd.lock_ref += 1
            covered += len(cur.key)
            if covered >= core.window:
                if cd.metadata.get("uuid") is None:
                    core.clock.uuid += 1
                    cd.metadata["uuid"] = core.clock.uuid
                stamp = cd.metadata["uuid"]
            cur = cur.parent
        receipt["uuids"][SWA] = stamp

    def unlock(self, node, receipt):
        core = self.core
        if node is core.root:
            return
        stamp = receipt["uuids"][SWA]
        cur, going = node, True
        while cur != core.root and going:
            cd = cur.component_data[SWA]
            assert cd.lock_ref > 0
            if cd.lock_ref == 1 and cd.value is not None:
                core.evictable[SWA] += len(cd.value)
                core.protected[SWA] -= len(cd.value)
            cd.lock_ref -= 1
            if cd.lock_ref == 0:
                core.update_leaf(cur)
            if stamp and cd.metadata.get("uuid") == stamp:
                going = False
            cur = cur.parent

    def release_window(self, node, stamp, frees):
        core = self.core
        cur = node
        while cur is not core.root:
            cd = cur.component_data[SWA]
            assert cd.lock_ref > 0
            cd.lock_ref -= 1
            if cd.lock_ref == 0:
                core.update_leaf(cur)
            if cd.lock_ref == 0 and cd.value is not None:
                core.protected[SWA] -= len(cd.value)
                core.evictable[SWA] += len(cd.value)
                if core.is_leaf(cur):
                    core.evict_and_detach(cur, self, frees)
            if stamp and cd.metadata.get("uuid") == stamp:
                break
            cur = cur.parent


class MambaComp:
    ct = MAMBA

    def __init__(self, core):
        self.core = core

    def validator(self):
        return lambda node: node.component_data[MAMBA].value is not None

    def priority(self, is_leaf):
        return 0

    def has_data(self, node):
        return node.component_data[MAMBA].value is not None

    def refresh(self, node, phase):
        if phase == "match_end" and node.component_data[MAMBA].value is not None:
            self.core.lrus[MAMBA].reset_node_mru(node)

    def finalize(self, result):
        grid = self.core.grid
        aligned = result["full_kv_hit_length"] // grid * grid
        result["mamba_branching_seqlen"] = aligned if aligned > result["device_prefix_len"] else None

    def finalize_cache(self, params, result):
        if not params.get("cow_mamba"):
            return
        src = result["best"].component_data[MAMBA].value
        if src is None:
            return
        cache, req = self.core.cache, params["req"]
        if req.get("mamba") is None:
            dst = cache.mamba_alloc.alloc(1)
            if dst is None:
                receipt = cache.inc_lock_ref(result["best"])
                cache.evict_for_alloc(0, 0, 1)
                dst = cache.mamba_alloc.alloc(1)
                cache.dec_lock_ref(result["best"], receipt)
            req["mamba"] = dst[0]
        cache.mamba_alloc.states[req["mamba"]] = cache.mamba_alloc.states[src[0]]
        req["src"] = src

    def overlap(self, node, n, total, vslice, params, actions):
        return n

    def commit(self, node, is_new_leaf, params, result, actions):
        core = self.core
        cd = node.component_data[MAMBA]
        if is_new_leaf:
            cd.value = params["mamba_value"]
            core.lrus[MAMBA].insert_mru(node)
            core.evictable[MAMBA] += 1
            if core.max_states >= 0:
                actions.append(("mamba_cap", node))
            return
        if cd.value is None:
            core.set_value(node, MAMBA, params["mamba_value"])
            node.last_access_time = core.clock.read()
            if core.max_states >= 0:
                actions.append(("mamba_cap", node))
            return
        core.lrus[MAMBA].reset_node_mru(node)
        node.last_access_time = core.clock.read()
        result["mamba_exist"] = True

    def cap_states(self, tail, frees):
        core = self.core
        holders, x = [], tail
        while x is not None and x is not core.root:
            if x.component_data[MAMBA].value is not None:
                holders.append(x)
            x = x.parent
        excess = len(holders) - core.max_states
        if excess <= 0:
            return
        tracker = dict.fromkeys(core.types, 0)
        for x in reversed(holders):
            if excess <= 0 or x is tail:
                break
            if x.component_data[MAMBA].lock_ref > 0 or len(x.children) != 1 or x in core.leaves:
                continue
            core.evict_and_detach(x, self, frees, tracker)
            core.cascade(x, self, tracker, frees)
            excess -= 1

    def split(self, parent, child):
        parent.component_data[MAMBA].value = None
        parent.component_data[MAMBA].lock_ref = 0

    def evict(self, node, frees):
        cd = node.component_data[MAMBA]
        if cd.value is None:
            return 0
        frees.setdefault(MAMBA, []).append(cd.value)
        self.core.evictable[MAMBA] -= 1
        cd.value = None
        return 1

    def walk_start(self, want):
        self.want = want
        self.cursor = self.core.lrus[MAMBA].lru_unlocked()

    def walk_next(self, tracker, frees, actions):
        core = self.core
        lru = core.lrus[MAMBA]
        if self.cursor is not None and not lru.in_list(self.cursor):
            self.cursor = lru.lru_unlocked()
        if tracker[MAMBA] >= self.want or self.cursor is None or not lru.in_list(self.cursor):
            return None
        x = self.cursor
        self.cursor = lru.prev_unlocked(x)
        if x in core.leaves:
            return x
        core.evict_and_detach(x, self, frees, tracker)
        core.cascade(x, self, tracker, frees)
        return None

    def lock(self, node, receipt):
        core = self.core
        if node is core.root:
            return
        cd = node.component_data[MAMBA]
        if cd.lock_ref == 0 and cd.value is not None:
            core.evictable[MAMBA] -= 1
            core.protected[MAMBA] += 1
        cd.lock_ref += 1

    def unlock(self, node, receipt):
        core = self.core
        if node is core.root:
            return
        cd = node.component_data[MAMBA]
        assert cd.lock_ref > 0
        if cd.lock_ref == 1 and cd.value is not None:
            core.evictable[MAMBA] += 1
            core.protected[MAMBA] -= 1
        cd.lock_ref -= 1
        if cd.lock_ref == 0:
            core.update_leaf(node)
