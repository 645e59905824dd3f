"""The first release's script operations (engine 2024): the #7 matcher switch and the #4
insert (``insert-slots release``), and the comparison of the two matchers before a match.

As in session.py, each handler's ``def`` carries its ``op.NAME`` marker and a step outside
the engine its own label.
"""
from __future__ import annotations

from radixviz.cache import compare_matchers

from ..parser import Op
from . import EngineOps


class ReleaseOps(EngineOps):
    def before_match(self, op: Op) -> None:
        """Mark the nodes the buggy matcher gets wrong, on the tree before the walk (after
        its split both matchers agree)."""
        session = self.session
        diff = compare_matchers(session.engine.snapshot(), op.key)
        session._disagreement = None
        if diff is None:
            return
        wrong, pos = [], 0
        for node_id, taken in diff.buggy.path:
            if pos + taken > diff.wrong_from:
                wrong.append(node_id)
            pos += taken
        session._disagreement = {"fixed": diff.fixed.matched, "buggy": diff.buggy.matched,
                                 "wrong_from": diff.wrong_from, "wrong_slots": list(diff.wrong_slots)}
        if session.cache.buggy_match:
            session._wrong_ahead = set(wrong)  # marked as the walk reaches them

    def _do_matcher(self, op: Op) -> dict:  # step: op.matcher
        self.session.engine.change("buggy", op.mode == "buggy")  # step: matcher
        self.session._step("matcher", "matcher", __name__, mode=op.mode)
        return {"mode": op.mode}

    def _do_insert_slots(self, op: Op) -> dict:  # step: op.insert-slots
        self.session.release_inserts = op.mode == "release"  # step: insert_slots
        self.session._step("insert_slots", "insert_slots", __name__, mode=op.mode)
        return {"mode": op.mode}


OPS = ReleaseOps
