"""The stepper's state, free of widgets: a Session and the frame being shown.

Frames are immutable snapshots, so moving back and forth only changes ``position``;
operations always run on the live cache (the newest state) and the view jumps to them.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Applied:
    """What one call to ``apply_text`` did: the records added, or the error line."""
    records: list
    error: str | None = None


class StepperModel:
    def __init__(self, session):
        self.session = session
        self.position = 0

    # ---------------------------------------------------------------- reading

    @property
    def frames(self) -> list:
        return self.session.frames

    @property
    def frame(self):
        return self.frames[self.position] if self.frames else None

    @property
    def record(self):
        """The OpRecord of the frame shown, or None before any operation."""
        frame = self.frame
        if frame is None or frame.op_index >= len(self.session.records):
            return None
        return self.session.records[frame.op_index]

    @property
    def at_end(self) -> bool:
        return self.position >= len(self.frames) - 1

    @property
    def live_buggy(self) -> bool:
        return self.session.cache.buggy_match

    # ----------------------------------------------------------------- moving

    def go(self, index: int) -> bool:
        """Show frame ``index`` (clamped); return whether the position changed."""
        if not self.frames:
            return False
        index = max(0, min(index, len(self.frames) - 1))
        moved = index != self.position
        self.position = index
        return moved

    def step(self, delta: int) -> bool:
        return self.go(self.position + delta)

    def next_op(self) -> bool:
        """The first frame of the next operation (or the last frame)."""
        record = self.record
        if record is None:
            return self.go(0)
        records = self.session.records
        if record.index + 1 < len(records):
            return self.go(records[record.index + 1].first_frame)
        return self.go(len(self.frames) - 1)

    def prev_op(self) -> bool:
        """The start of this operation, or of the one before when already there."""
        record = self.record
        if record is None:
            return False
        if self.position > record.first_frame or record.index == 0:
            return self.go(record.first_frame)
        return self.go(self.session.records[record.index - 1].first_frame)

    # --------------------------------------------------------------- changing

    def apply_ops(self, ops) -> Applied:
        """Apply ops in order; stop at the first refused one (those before it stay)."""
        from radixviz.script import ScriptError

        added = []
        for op in ops:
            try:
                added.append(self.session.apply(op))
            except ScriptError as exc:
                self._jump_to(added)
                return Applied(added, exc.message if exc.file == "<input>" else str(exc))
        self._jump_to(added)
        return Applied(added)

    def apply_text(self, text: str) -> Applied:
        """Parse and apply a line of the operation language; a bad line changes nothing."""
        from radixviz.script import ScriptError, parse_script

        try:
            ops = parse_script(text, "<input>")
        except ScriptError as exc:
            return Applied([], f"column {exc.col}: {exc.message}")
        if not ops:
            return Applied([], "nothing to do: type an operation, e.g. insert \"Hello\"")
        return self.apply_ops(ops)

    def toggle_matcher(self) -> Applied:
        from radixviz.script import Op

        mode = "fixed" if self.live_buggy else "buggy"
        return self.apply_ops([Op("matcher", mode=mode, text=f"matcher {mode}")])

    def node_op(self, name: str, node_id: int) -> Applied:
        """lock/unlock the full key leading to a node of the frame shown, or evict its size."""
        from radixviz.script import Op, key_text

        tree = self.frame.tree
        if node_id not in tree.nodes or node_id == tree.root.id:
            return Applied([], "pick a node other than the root")
        if name == "evict":
            count = len(tree.nodes[node_id].key)
            return self.apply_ops([Op("evict", count=count, text=f"evict {count}")])
        key = tuple(t for nid in tree.path_to(node_id) for t in tree.nodes[nid].key)
        return self.apply_ops([Op(name, key=key, text=f"{name} {key_text(key, limit=40)}")])

    def _jump_to(self, added: list) -> None:
        if not added:
            return
        first = added[0]
        # a matcher switch has nothing to step through: show the switch itself
        if len(added) == 1 and first.op.name == "matcher":
            self.go(first.last_frame)
        else:
            self.go(first.first_frame)
