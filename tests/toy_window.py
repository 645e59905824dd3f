"""A toy engine with an option of its own: the trie of toy_engine.py with a ``window`` (how
many tokens a sliding window would keep; the toy only carries it, shows it and reports it).

Its whole declaration is the ``Option`` and the spec below: the flag ``--window N`` of run,
export, sandbox and simulate, the script operation ``window N``, the limits, the help line and
the refusals all come from them. Its nodes carry a field of their own, ``depth``, which its
views (tests/toy_window_views.py, named by the spec) add to the tree, the diagram and the JSON.
"""
from __future__ import annotations

from dataclasses import dataclass

from radixviz.cache.engines import EngineSpec
from radixviz.cache.options import Option
from radixviz.cache.snapshot import NodeSnapshot, TreeSnapshot, snapshot_subtree
from radixviz.limits import Limit

import toy_engine

WINDOW = Option("window", 8, "tokens the sliding window keeps (a test's toy)",
                limit=Limit("window", 1, 64), what="a sliding window")
SPEC = EngineSpec("toyw", __name__, "the toy trie with a window (a test's toy)", (WINDOW,),
                  lambda settings: (f"window {settings['window']}",), views="toy_window_views")


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


def _depth(node) -> int:
    depth = 0
    while node.parent is not None:
        depth, node = depth + 1, node.parent
    return depth


class Engine(toy_engine.Engine):
    def make_cache(self) -> WindowTrie:
        return WindowTrie(self.pool.device, self.settings["window"])
