"""The first release's script operations (engine 2024): the #7 matcher switch and the #4
insert (``insert-slots release``), and the comparison of the two matchers before a match.

As in session.py, each handler's ``def`` carries its ``op.NAME`` marker and a step outside
the engine its own label.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import torch

from radixviz.cache.contract import CacheNode
from radixviz.cache.engines import EngineSpec
from radixviz.cache.options import MATCHER, STRICT

from radixviz.script.parser import Op
from radixviz.script.ops import EngineOps, SessionShape

from .preview import compare_matchers


class ReleaseOps(EngineOps):
    """The first release's switches, kept per session: ``insert-slots release`` (#4) and the
    two matchers' comparison before each match (#7)."""

    def __init__(self, session: SessionShape):
        super().__init__(session)
        self.release_inserts = False   # insert-slots release: one slot fewer than tokens (#4)
        self.disagreement: dict | None = None   # the two matchers' answers to the match running

    def opened(self) -> None:
        self.release_inserts = False

    def slots_for(self, need: int) -> int:
        # the release's scheduler stored seq_len = len - 1 slots: the last token's K/V is not
        # computed yet (#4); the tree still takes the whole key
        self.session.knowingly_broken |= self.release_inserts
        return need - 1 if self.release_inserts else need

    def match(self, op: Op) -> tuple[torch.Tensor, CacheNode, dict]:
        value, last_node, extra = super().match(op)
        extra["disagreement"] = self.disagreement
        return value, last_node, extra

    def before_match(self, op: Op) -> None:
        """Mark the nodes the buggy matcher gets wrong, on the tree before the walk (after
        its split both matchers agree)."""
        assert op.key is not None   # a match always carries its key (the parser's)
        session = self.session
        diff = compare_matchers(session.engine.snapshot(), op.key)
        self.disagreement = None
        if diff is None:
            return
        wrong, pos = [], 0
        for node_id, taken in diff.buggy.path:
            if pos + taken > diff.wrong_from:
                wrong.append(node_id)
            pos += taken
        self.disagreement = {"fixed": diff.fixed.matched, "buggy": diff.buggy.matched,
                             "wrong_from": diff.wrong_from, "wrong_slots": list(diff.wrong_slots)}
        if session.engine.settings.of(MATCHER):
            self.wrong_ahead = set(wrong)  # marked as the walk reaches them

    def _do_matcher(self, op: Op) -> dict:  # step: op.matcher
        self.session.engine.change(MATCHER.name, op.mode == "buggy")  # step: matcher
        self.session._step("matcher", "matcher", __name__, mode=op.mode)
        return {"mode": op.mode}

    def _do_insert_slots(self, op: Op) -> dict:  # step: op.insert-slots
        self.release_inserts = op.mode == "release"  # step: insert_slots
        # the cache takes a value one slot short from now on, as the release's did
        self.session.engine.change(STRICT.name, not self.release_inserts)
        self.session._step("insert_slots", "insert_slots", __name__, mode=op.mode)
        return {"mode": op.mode}

    @classmethod
    def column_name(cls, spec: EngineSpec, settings: Mapping) -> str:
        """The #7 comparison's two columns are this engine with either matcher."""
        return "buggy" if settings.get("buggy") else "fixed"

    @classmethod
    def column_title(cls, spec: EngineSpec, settings: Mapping) -> str:
        matcher = "BUGGY matcher (pre-#7)" if settings.get("buggy") else "fixed matcher (#7)"
        return f"{spec.name} engine, {matcher}"

    @classmethod
    def column_engine_line(cls, op: Op, spec: EngineSpec) -> Op:
        """A reset, not a reopen: the column's matcher (its setting, not an option's
        default) stays as the column was given it."""
        return replace(op, name="reset", mode=None)


OPS = ReleaseOps
