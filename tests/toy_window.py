"""A toy engine with two components: the trie of toy_engine.py (one token a node, its device
KV in the session's pool) and a **window pool**, a second pool that keeps a copy of the last
``window`` tokens of each path inserted. The copy is its own memory: locked on its own (a lock
holds the window's nodes of its path, and hands back a receipt the facade keeps), evicted on
its own (``evict N window``, or when an insert finds the window pool full: the oldest unlocked
copies go first), so a node can lose its copy and stay (a tombstone: ``win ⊘``). Evicting a
leaf from the tree frees its copy with it.

Its whole declaration is this file's spec, options and components (``memory``): the flags
``--copies N`` and ``--copy-pool N``, the script operations ``copies N`` and
``copy-pool N``, the second grid of the pool pane, the ``win`` part of every node line, box
and JSON node, the ``window`` entry of ``run --json``'s components and the status line all
come from them and the shared views (render/views/: nothing here draws a pool). Its nodes'
``depth`` is drawn by its own views (tests/toy_window_views.py); its words for its own kinds
of step, ``copy`` and ``tombstone``, are declared in its spec; tests/toy_window_ops.py says
how much of a match the window holds, tests/toy_window_sim.py counts copies in a simulation.
"""
from __future__ import annotations

from dataclasses import dataclass

from radixviz.cache.contract import DEVICE, Component, Held, NodePart
from radixviz.cache.engines import EngineSpec
from radixviz.cache.invariants import InvariantError, check_pool
from radixviz.cache.options import Option
from radixviz.cache.pool import TokenToKVPool
from radixviz.cache.snapshot import NodeSnapshot, TreeSnapshot, invalidate, locked_tokens, snapshot_subtree
from radixviz.limits import Limit

import toy_engine

WINDOW = Option("copies", 8, "tokens of each path the window pool keeps a copy of (a test's toy)",
                limit=Limit("copies", 1, 64), what="window copies")
WINDOW_POOL = Option("copy_pool", 8, "slots in the window pool (a test's toy)",
                     limit=Limit("copy pool", 1, 4096), what="window copies")
WINDOW_COPY = Component("window", "window pool · a copy of each path's last tokens", "win",
                        touched="window_slots")
KINDS = {"copy": "the last tokens of the path inserted get a copy in the window pool, a slot each",
         "tombstone": "the window pool took this node's copy back; the node stays, with its device KV"}
SPEC = EngineSpec("toyw", __name__, "the toy trie with a window pool (a test's toy)", (WINDOW, WINDOW_POOL),
                  lambda s: (f"copies {s['copies']}", f"copy pool {s['copy_pool']}"),
                  views="toy_window_views", script="toy_window_ops", sim="toy_window_sim", kinds=KINDS)


@dataclass(frozen=True, slots=True)
class WindowNodeSnapshot(NodeSnapshot):
    depth: int = 0                  # tokens from the root to this node's end (its own field)
    win: tuple | None = None        # its slot in the window pool; None: no copy (a tombstone)
    win_ref: int = 0                # locks on the copy

    @property
    def parts(self) -> tuple[NodePart, ...]:
        return NodePart(DEVICE, self.value, self.ref), NodePart(WINDOW_COPY, self.win, self.win_ref)


@dataclass(frozen=True)
class WindowSnapshot(TreeSnapshot):
    window: int = WINDOW.default
    window_pool: int = WINDOW_POOL.default

    @property
    def settings(self) -> dict:
        return {"copies": self.window, "copy_pool": self.window_pool}

    @property
    def components(self) -> tuple[Component, ...]:
        return DEVICE, WINDOW_COPY

    @property
    def held(self) -> tuple[Held, ...]:
        copies = [n for n in self.root.walk() if n.key and n.win is not None]
        return (Held(DEVICE, self.evictable_size, locked_tokens(self.root)),
                Held(WINDOW_COPY, sum(1 for n in copies if not n.win_ref), sum(1 for n in copies if n.win_ref)))


class WindowNode(toy_engine.Node):
    __slots__ = ("win", "win_ref")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.win, self.win_ref = None, 0


class WindowTrie(toy_engine.TrieCache):
    node_class = WindowNode

    def __init__(self, device, window: int, pool_size: int):
        self.window, self.pool_size = window, pool_size
        super().__init__(device)

    def reset(self) -> None:
        super().reset()
        self.window_pool = TokenToKVPool(self.pool_size, device=self.device)
        self.copies = self.tombstones = 0   # copies made and taken back, for the simulation

    def snapshot(self) -> WindowSnapshot:
        root = snapshot_subtree(self.root_node, lambda n, kids: WindowNodeSnapshot(
            n.id, n.key, tuple(n.value.tolist()), n.ref, n.last_access_time, kids,
            len(n.key) + sum(k.subtree_tokens for k in kids), _depth(n),
            None if n.win is None else tuple(n.win.tolist()), n.win_ref))
        return WindowSnapshot(root, self.evictable, self.clock, engine="toyw", window=self.window,
                              window_pool=self.pool_size)

    def insert(self, key, value=None) -> int:
        held = super().insert(key, value)
        path, node = [], self.root_node
        for token in key:
            node = node.children[token]
            path.append(node)
        self._copy(path[-self.window:])
        return held

    def _copy(self, nodes: list) -> None:
        """Give each of ``nodes`` without one a copy in the window pool, evicting the oldest
        unlocked copies first when the pool is short (never those of ``nodes``); with too few
        slots still, the deepest get theirs."""
        need = [n for n in nodes if n.win is None]
        short = len(need) - self.window_pool.available_size()
        if short > 0:
            self.evict_window(short, keep=set(map(id, nodes)))
        need = need[len(need) - min(len(need), self.window_pool.available_size()):]
        if not need:
            return
        slots = self.window_pool.alloc(len(need))
        for node, slot in zip(need, slots):
            node.win = slot.reshape(1)  # step: window.copy
            invalidate(node)
        self.copies += len(need)
        if self.tracer.active:
            self.tracer.emit("window.copy", "copy", (need[0],), component=WINDOW_COPY.name,
                             window_slots=tuple(slots.tolist()), tokens=len(need))

    def evict_window(self, num_tokens: int, freed=None, keep=frozenset()) -> int:
        """Take back the copies of ``num_tokens`` nodes, oldest access first, that no lock
        holds (and not those in ``keep``): each node stays, without its copy (a tombstone).
        Returns how many window slots became free."""
        done = 0
        while done < num_tokens:
            held = [n for n in self._nodes() if n.win is not None and not n.win_ref and id(n) not in keep]
            if not held:
                break
            node = min(held, key=lambda n: (n.last_access_time, n.id))
            slots, node.win = node.win, None  # step: window.tombstone
            invalidate(node)
            done += self.window_pool.free(slots)
            self.tombstones += 1
            if freed is not None:
                freed(slots)
            if self.tracer.active:
                self.tracer.emit("window.tombstone", "tombstone", (node,), component=WINDOW_COPY.name,
                                 window_slots=tuple(slots.tolist()))
        return done

    def _on_delete(self, leaf) -> None:
        if leaf.win is not None:   # the leaf leaves the tree: its copy goes with it
            slots, leaf.win = leaf.win, None
            self.window_pool.free(slots)  # step: window.free
            if self.tracer.active:
                self.tracer.emit("window.free", "free", (leaf,), component=WINDOW_COPY.name,
                                 window_slots=tuple(slots.tolist()), freed=len(slots))

    def lock_window(self, node, step: int, nodes=None) -> list:
        """Lock (``step`` +1) the copies of the last ``window`` nodes on the path to ``node``
        that have one; unlock (-1) ``nodes``, the receipt of that lock. Returns the receipt."""
        if nodes is None:
            nodes, at = [], node
            while at is not self.root_node and len(nodes) < self.window:
                if at.win is not None:
                    nodes.append(at)
                at = at.parent
        for held in nodes:
            held.win_ref += step  # step: window.lock
            invalidate(held)
        return nodes


def _depth(node) -> int:
    depth = 0
    while node.parent is not None:
        depth, node = depth + 1, node.parent
    return depth


class Engine(toy_engine.Engine):
    memory = (DEVICE, WINDOW_COPY)

    def make_cache(self) -> WindowTrie:
        self.receipts: dict = {}   # node id -> the window locks taken there, newest last
        return WindowTrie(self.pool.device, self.settings.of(WINDOW), self.settings.of(WINDOW_POOL))

    def extra_pools(self) -> tuple:
        return (self.cache.window_pool,)

    def evict_component(self, component, num_tokens, freed) -> int:
        return self.cache.evict_window(num_tokens, freed)

    def lock(self, node) -> int:
        delta = super().lock(node)
        self.receipts.setdefault(node.id, []).append(self.cache.lock_window(node, +1))
        return delta

    def unlock(self, node) -> int:
        delta = super().unlock(node)
        self.cache.lock_window(node, -1, self.receipts[node.id].pop())
        return delta

    def reset(self, pool=None) -> None:
        super().reset(pool)
        self.receipts.clear()

    def check_invariants(self, held=()) -> None:
        super().check_invariants(held)
        owner, locks = {}, 0
        for node in self.cache._nodes():
            if node.win is not None:
                owner[int(node.win[0])] = node.id
            locks += node.win_ref
        if locks != sum(len(n) for taken in self.receipts.values() for n in taken):
            raise InvariantError(f"window locks {locks} differ from the receipts the engine holds")
        check_pool(self.cache.window_pool, owner, ())
