"""A toy engine with an option of its own: the trie of toy_engine.py with a ``window`` (how
many tokens a sliding window would keep; the toy only carries it, shows it and reports it).

Its whole declaration is the ``Option`` and the spec below: the flag ``--window N`` of run,
export, sandbox and simulate, the script operation ``window N``, the limits, the help line and
the refusals all come from them. Its own operation ``slide`` (tests/toy_window_ops.py) trims
the tree to the window, and its scheduler hook (tests/toy_window_sim.py) slides every round.
Its nodes carry a field of their own, ``depth``, which its
views (tests/toy_window_views.py, named by the spec) add to the tree, the diagram and the JSON.
"""
from __future__ import annotations

from dataclasses import dataclass

from radixviz.cache.engines import EngineSpec
from radixviz.cache.options import Option
from radixviz.cache.snapshot import NodeSnapshot, TreeSnapshot, invalidate, snapshot_subtree
from radixviz.cache.trace import EventKind as K
from radixviz.limits import Limit

import toy_engine

WINDOW = Option("window", 8, "tokens the sliding window keeps (a test's toy)",
                limit=Limit("window", 1, 64), what="a sliding window")
SPEC = EngineSpec("toyw", __name__, "the toy trie with a window (a test's toy)", (WINDOW,),
                  lambda settings: (f"window {settings['window']}",), views="toy_window_views",
                  script="toy_window_ops", sim="toy_window_sim", ops=("slide",))


@dataclass(frozen=True, slots=True)
class DepthNodeSnapshot(NodeSnapshot):
    depth: int = 0     # tokens from the root to this node's end (its own field: one token a node)


@dataclass(frozen=True)
class WindowSnapshot(TreeSnapshot):
    window: int = WINDOW.default

    @property
    def settings(self) -> dict:
        return {"window": self.window}


class WindowTrie(toy_engine.TrieCache):
    def __init__(self, device, window: int):
        self.window = window
        super().__init__(device)

    def snapshot(self) -> WindowSnapshot:
        root = snapshot_subtree(self.root_node, lambda n, kids: DepthNodeSnapshot(
            n.id, n.key, tuple(n.value.tolist()), n.ref, n.last_access_time, kids,
            len(n.key) + sum(k.subtree_tokens for k in kids), _depth(n)))
        return WindowSnapshot(root, self.evictable, self.clock, engine="toyw", window=self.window)

    def slide(self, evict_callback) -> int:
        """Drop every unlocked node deeper than ``window`` tokens, its subtree with it (a lock
        holds the whole path to the root, so below an unlocked node nothing is locked); each
        dropped node's slot goes to ``evict_callback``. Returns how many tokens were dropped.

        The toy's own rule, a cap on how far into a prompt the cache keeps tokens; SGLang's
        sliding-window cache frees the other end (the old tokens near the root)."""
        self.tracer.op = "slide"
        dropped = 0
        edge = [n for n in self._nodes() if n.ref == 0 and _depth(n) == self.window + 1]
        for top in sorted(edge, key=lambda n: n.id):
            subtree = [top, *_below(top)]
            for node in subtree:
                evict_callback(node.value)
            del top.parent.children[top.key[0]]  # step: slide.drop
            invalidate(top.parent)
            self.evictable -= len(subtree)
            dropped += len(subtree)
            if self.tracer.active:
                self.tracer.emit("slide.drop", K.DELETE, (top.parent,), leaf=top.id, key=top.key,
                                 tokens=len(subtree), window=self.window)
        if self.tracer.active:
            self.tracer.emit("slide.result", K.RESULT, (), dropped=dropped, window=self.window)
        return dropped


def _below(node) -> list:
    stack, found = list(node.children.values()), []
    while stack:
        found.append(stack.pop())
        stack.extend(found[-1].children.values())
    return found


def _depth(node) -> int:
    depth = 0
    while node.parent is not None:
        depth, node = depth + 1, node.parent
    return depth


class Engine(toy_engine.Engine):
    def make_cache(self) -> WindowTrie:
        return WindowTrie(self.pool.device, self.settings["window"])

    def slide(self, freed=None) -> int:
        """``WindowTrie.slide`` behind the facade: the dropped slots go back to the pool (and
        to ``freed``). Returns how many tokens left the tree."""
        def release(slots) -> None:
            self.pool.free(slots)
            if freed is not None:
                freed(slots)
        return self.cache.slide(release)
