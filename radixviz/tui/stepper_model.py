"""The stepper's state, free of widgets: a Session and the frame being shown.

Frames are immutable snapshots, so moving back and forth only changes ``position``;
operations always run on the live cache (the newest state) and the view jumps to them.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from radixviz.script.frame_history import FrameHistory
from radixviz.script.frames import Frame, OpRecord
from radixviz.script.narrate import key_text, node_namespace
from radixviz.script.parser import Op, ScriptError, parse_script

if TYPE_CHECKING:
    from radixviz.script.session import Session
    from radixviz.settings import SessionCaps


@dataclass
class Applied:
    """What one call to ``apply_text`` did: the records added, or the error line."""
    records: list[OpRecord]
    error: str | None = None


class StepperModel:
    def __init__(self, session: Session, caps: SessionCaps | None = None):
        """``caps``: a settings.SessionCaps in a served session (None: no limits)."""
        self.session = session
        self.caps = caps
        self.position = 0
        self.redo_stack: list[Op] = []   # operations undone, the next redo last

    # ---------------------------------------------------------------- reading

    @property
    def frames(self) -> FrameHistory:
        return self.session.frames

    @property
    def frame(self) -> Frame | None:
        frames = self.frames
        if not frames:
            return None
        if self.position < frames.first:   # dropped for memory since (frame_history.py)
            self.position = frames.first
        return frames[self.position]

    @property
    def record(self) -> OpRecord | None:
        """The OpRecord of the frame shown, or None before any operation."""
        return self.record_of(self.frame)

    def record_of(self, frame: Frame | None) -> OpRecord | None:
        """The OpRecord of the operation ``frame`` belongs to, or None."""
        if frame is None or frame.op_index >= len(self.session.records):
            return None
        return self.session.records[frame.op_index]

    @property
    def at_end(self) -> bool:
        return self.position >= len(self.frames) - 1

    @property
    def at_oldest_kept(self) -> bool:
        """The frame shown is the oldest one kept, and older ones were dropped for memory."""
        frames = self.frames
        return bool(frames) and frames.dropped > 0 and self.position <= frames.first

    def dropped_note(self) -> tuple[str, str]:
        """(long, short) words for the status line at the oldest frame kept."""
        frames = self.frames
        return (f"⚠ steps 1–{frames.dropped:,} dropped to keep memory under {frames.limit_mb:g} MB",
                f"⚠ {frames.dropped:,} dropped")

    @property
    def live_buggy(self) -> bool:
        return self.session.engine.snapshot().buggy_match

    # ----------------------------------------------------------------- moving

    def go(self, index: int) -> bool:
        """Show frame ``index`` (clamped to the frames kept); return whether the position
        changed."""
        if not self.frames:
            return False
        index = max(self.frames.first, min(index, len(self.frames) - 1))
        moved = index != self.position
        self.position = index
        return moved

    def step(self, delta: int) -> bool:
        return self.go(self.position + delta)

    def next_op_start(self) -> int:
        """The first frame of the next operation (or the last frame)."""
        record = self.record
        if record is None:
            return 0
        records = self.session.records
        if record.index + 1 < len(records):
            return records[record.index + 1].first_frame
        return len(self.frames) - 1

    def prev_op_start(self) -> int:
        """The start of this operation, or of the one before when already there."""
        record = self.record
        if record is None:
            return self.position
        if self.position > record.first_frame or record.index == 0:
            return record.first_frame
        return self.session.records[record.index - 1].first_frame

    def next_op(self) -> bool:
        return self.go(self.next_op_start())

    def prev_op(self) -> bool:
        return self.go(self.prev_op_start())

    # --------------------------------------------------------------- changing

    def apply_ops(self, ops: Iterable[Op], what: str = "line") -> Applied:
        """Apply ``ops`` whole or not at all: at the first refused one, the session goes back
        to how it was before them and the error says so (``what``: "line", "script")."""
        ops = list(ops)
        refused = self._over_caps(ops)
        if refused:
            return Applied([], refused)
        before, added = self.session.ops, []
        stack, self.redo_stack = self.redo_stack, []   # a new operation starts a new future
        for number, op in enumerate(ops, 1):
            try:
                added.append(self.session.apply(op))
            except ScriptError as exc:
                reason = exc.message if exc.file == "<input>" else str(exc)
                return self._take_back(before, stack, added, len(ops), number, reason, what)
        if self.caps is not None and len(self.frames) > self.caps.frames:
            return self._take_back(before, stack, added, len(ops), None,
                                   f"this session keeps at most {self.caps.frames:,} steps", what)
        self._jump_to(added)
        return Applied(added)

    def _take_back(self, before: list[Op], stack: list[Op], added: list[OpRecord], count: int,
                   number: int | None, reason: str, what: str) -> Applied:
        """Undo a partly applied ``what``: replay the operations that came before it."""
        if added:
            self.rerun(before)
        self.redo_stack = stack
        if count == 1:
            return Applied([], reason)
        which = f"operation {number} of {count} was refused" if number else "it was refused"
        return Applied([], f"nothing applied: {which}, so the whole {what} was taken back: {reason}")

    def _over_caps(self, ops: list[Op]) -> str | None:
        """Why a served session refuses ``ops`` before applying any (None: go ahead)."""
        caps = self.caps
        if caps is None:
            return None
        if len(ops) > caps.ops_per_line:
            return f"at most {caps.ops_per_line} operations at once here (this has {len(ops)})"
        if len(self.session.records) + len(ops) > caps.ops_per_session:
            return (f"this session keeps at most {caps.ops_per_session} operations: save it "
                    "(ctrl+s), then reset or undo")
        longest = max((len(op.key) for op in ops if op.key is not None), default=0)
        if longest > caps.key_tokens:
            return f"keys of at most {caps.key_tokens} tokens here (this one has {longest})"
        # the host pool is allocated whole at once: bounded by the class's memory budget
        hosts = (caps.host_refusal(op.count, self.session.pool_size) for op in ops if op.name == "host-size")
        return next((refusal for refusal in hosts if refusal), None)

    def apply_text(self, text: str) -> Applied:
        """Parse and apply a line of the operation language, whole or not at all."""
        if self.caps is not None and len(text) > self.caps.line_chars:
            return Applied([], f"a line of at most {self.caps.line_chars:,} characters here")
        try:
            ops = parse_script(text, "<input>")
        except ScriptError as exc:
            return Applied([], f"column {exc.col}: {exc.message}")
        if not ops:
            return Applied([], "nothing to do: type an operation, e.g. insert \"Hello\"")
        return self.apply_ops(ops)

    def toggle_matcher(self) -> Applied:
        """Run the whole history again from the start with the other matcher, staying on the
        same operation: after the chapter's match has split the edge, switching and matching
        again would agree, so the switch rewrites history instead of adding to it. A script's
        own ``matcher`` lines still switch where they stand."""
        return self.rerun(self.session.ops, buggy=not self.session.initial_buggy)

    # ------------------------------------------------------------ history

    def undo(self) -> Applied:
        """Take back the last operation (the session is replayed without it)."""
        ops = self.session.ops
        if not ops:
            return Applied([], "nothing to undo")
        applied = self.rerun(ops[:-1], keep=False)
        if applied.error is None:
            self.redo_stack.append(ops[-1])
        return applied

    def redo(self) -> Applied:
        """Apply again the operation the last undo took back."""
        if not self.redo_stack:
            return Applied([], "nothing to redo")
        op = self.redo_stack.pop()
        stack = self.redo_stack
        applied = self.apply_ops([op])
        self.redo_stack = stack   # apply_ops starts a new future; a redo continues the old one
        if applied.error:
            stack.append(op)
        return applied

    def rerun(self, ops: Sequence[Op], buggy: bool | None = None, keep: bool = True) -> Applied:
        """Replace the session by a fresh one that applies ``ops``; on a refused operation
        the old session stays. ``keep`` shows the same operation (and step in it) as before,
        else the view goes to the end."""
        old_session, old_record = self.session, self.record
        offset = self.position - old_record.first_frame if old_record else 0
        at_last = old_record is not None and self.position == old_record.last_frame
        fresh = type(old_session)(old_session.pool_size, old_session.initial_buggy if buggy is None else buggy,
                                  old_session.device, history_mb=old_session.history_mb,
                                  **old_session.initial)
        try:
            for op in ops:
                fresh.apply(op)
        except ScriptError as exc:
            return Applied([], f"could not replay the operations: {exc.message}")
        self.session = fresh
        records = fresh.records
        if keep and old_record is not None and old_record.index < len(records):
            record = records[old_record.index]
            self.go(record.last_frame if at_last else min(record.first_frame + offset, record.last_frame))
        else:
            self.position = 0
            self.go(len(self.frames) - 1)
        return Applied(list(records))

    def node_op(self, name: str, node_id: int) -> Applied:
        """lock/unlock the full key leading to a node of the frame shown, or evict its size."""
        frame = self.frame
        if frame is None:   # a session always has its start frame; this only narrows the type
            return Applied([], "no step shown to pick a node in")
        tree = frame.tree
        if node_id not in tree.nodes or node_id == tree.root.id:
            return Applied([], "pick a node other than the root")
        if name == "evict":
            count = len(tree.nodes[node_id].key)
            return self.apply_ops([Op("evict", count=count, text=f"evict {count}")])
        key = tuple(t for nid in tree.path_to(node_id) for t in tree.nodes[nid].key)
        ns = node_namespace(tree, tree.nodes[node_id])
        text = f"{name} {key_text(key, limit=40)}" + ("" if ns is None else f" ns {ns}")
        return self.apply_ops([Op(name, key=key, ns=ns, text=text)])

    def _jump_to(self, added: list[OpRecord]) -> None:
        if not added:
            return
        first = added[0]
        # a matcher switch has nothing to step through: show the switch itself
        if len(added) == 1 and first.op.name == "matcher":
            self.go(first.last_frame)
        else:
            self.go(first.first_frame)
