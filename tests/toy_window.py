"""A toy engine with an option of its own: the trie of toy_engine.py with a ``window`` (how
many tokens a sliding window would keep; the toy only carries it, shows it and reports it).

Its whole declaration is the ``Option`` and the spec below: the flag ``--window N`` of run,
export, sandbox and simulate, the script operation ``window N``, the limits, the help line and
the refusals all come from them.
"""
from __future__ import annotations

from dataclasses import dataclass

from radixviz.cache.engines import EngineSpec
from radixviz.cache.options import Option
from radixviz.cache.snapshot import TreeSnapshot
from radixviz.limits import Limit

import toy_engine

WINDOW = Option("window", 8, "tokens the sliding window keeps (a test's toy)",
                limit=Limit("window", 1, 64), what="a sliding window")
SPEC = EngineSpec("toyw", __name__, "the toy trie with a window (a test's toy)", (WINDOW,),
                  lambda settings: (f"window {settings['window']}",))


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
        tree = super().snapshot()
        return WindowSnapshot(tree.root, tree.evictable_size, tree.clock, engine="toyw", window=self.window)


class Engine(toy_engine.Engine):
    def make_cache(self) -> WindowTrie:
        return WindowTrie(self.pool.device, self.settings["window"])
