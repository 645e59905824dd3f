"""The toy window engine in a session (tests/toy_window.py names this module in its spec:
``script="toy_window_ops"``): a match says how many of its last ``window`` tokens the window
pool still holds a copy of (``window_hit``), and a full pool's refusal names the window's
own eviction. Its kinds of step (``copy``, ``tombstone``) are worded by its spec's ``kinds``;
everything else, ``evict N window`` included, is the shared session's.
"""
from __future__ import annotations

from radixviz.script.ops import EngineOps
from radixviz.script.parser import Op


class WindowOps(EngineOps):
    """The toy window engine's session hooks."""

    ways_to_room = "evict, evict N window, unlock or reset"

    def match(self, op: Op):
        value, last_node, extra = super().match(op)
        window, hit, node = self.session.engine.cache.window, 0, last_node
        for _ in range(min(window, len(value))):
            hit += node.win is not None
            node = node.parent
        extra["window_hit"] = hit   # of the match's last min(window, matched) tokens
        return value, last_node, extra


OPS = WindowOps
