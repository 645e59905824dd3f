"""The watcher's state, fed frames by whatever carries them (sockets, a recording).

Each stream (one publisher: one DP rank's port) has its next expected sequence number. A
message past it is a gap: with a replay socket the core asks for everything from the
expected number (``ReplayRequest``), holds the live messages that keep coming, and when the
replay ends (sequence -1, or the caller's timeout) applies what it got and what it held in
sequence order; what neither had is lost for good and counted. The reply holds what the
publisher had when it answered, so a gap among the held messages past the last seq it
returned (a batch dropped live after the publisher answered) is asked for again, from the
first missing seq; each such ask starts later than the one before, so asking ends. Without a
replay socket a gap is lost at once. The first message of a stream with a replay socket
asks for everything from 0, so a watcher that joins a running server still sees the blocks
stored before it came (as far as the publisher's buffer goes back).

Trees are kept per DP rank: the batch's ``attn_dp_rank``, or the stream's rank when the
batch has none.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from collections.abc import Callable

from .blocks import DEFAULT_MAX_BLOCKS, BlockTree, Problems
from .messages import (DEFAULT_MAX_FRAME, END_SEQ, Message, WireError, decode_batch, decode_seq,
                       parse_message, parse_replay)
from .events import WIRE_WORDS, batch_wire

if TYPE_CHECKING:
    from collections.abc import Sequence

LOG_LINES = 500          # the log keeps the newest lines only
MAX_HELD = 100_000       # live messages held during one replay (past it the replay is cut short)


@dataclass
class ReplayRequest:
    stream: int
    start: int


@dataclass
class Applied:
    """A batch applied to ``rank``'s tree."""
    stream: int
    seq: int
    rank: int
    message: Message


@dataclass
class _Stream:
    rank: int
    has_replay: bool
    expected: int | None = None
    replay_start: int | None = None          # while a replay is under way
    replay_since: float = 0.0
    history: bool = False                    # this replay fetches what came before we joined
    got: dict = field(default_factory=dict)  # seq -> Message, replayed
    replied_to: int | None = None            # the last seq the reply returned (decoded or not)
    held: list = field(default_factory=list)  # live messages that came during the replay


class WatchCore:
    def __init__(self, ranks: int = 1, replay: bool = False, max_frame: int = DEFAULT_MAX_FRAME,
                 max_blocks: int = DEFAULT_MAX_BLOCKS, wire: str | None = None) -> None:
        self.problems = Problems()
        self.wire = wire                    # read every payload as this wire (None: tell each's)
        self.wires: dict[int, str] = {}     # stream -> the wire its last batch came in
        self.max_frame, self.max_blocks = max_frame, max_blocks
        self.streams = [_Stream(rank, replay) for rank in range(ranks)]
        self.trees: dict[int, BlockTree] = {}
        self.log: deque = deque(maxlen=LOG_LINES)
        self.batches = 0
        self.notes = 0           # lines noted so far (the log holds the newest LOG_LINES)
        # called right after each batch is applied, while the trees show its effect (a replay
        # applies several at once: a caller reading the trees later sees only the last)
        self.listeners: list[Callable[[Applied], None]] = []

    def tree(self, rank: int) -> BlockTree:
        if rank not in self.trees:
            self.trees[rank] = BlockTree(self.problems, self.max_blocks)
        return self.trees[rank]

    def note(self, text: str) -> None:
        self.log.append(text)
        self.notes += 1

    def notes_since(self, count: int) -> list[str]:
        """The lines noted after the first ``count`` (those still in the log)."""
        new = self.notes - count
        return list(self.log)[-new:] if new > 0 else []

    # ------------------------------------------------------------------ live frames

    def live(self, stream: int, frames: list) -> tuple[list[Applied], list[ReplayRequest]]:
        """Take one message from stream ``stream``'s SUB socket."""
        state = self.streams[stream]
        message = parse_message(frames, self.max_frame, self.wire)
        if isinstance(message, WireError):
            self._bad(state, stream, frames, message)
            return [], []
        if state.replay_start is not None:
            if len(state.held) >= MAX_HELD:
                self.note(f"stream {stream}: {MAX_HELD:,} messages held during a replay: cutting it short")
                done = self.finish_replay(stream)
                return done[0] + self.live(stream, frames)[0], done[1]
            state.held.append(message)
            return [], []
        if state.expected is None and state.has_replay and message.seq > 0:
            return self._ask(state, stream, 0, message, history=True)
        if state.expected is not None and message.seq > state.expected:
            self.problems.gaps += 1
        if state.expected is not None and message.seq > state.expected and state.has_replay:
            self.note(f"stream {stream}: gap, {_span(state.expected, message.seq)} missing: asking replay")
            return self._ask(state, stream, state.expected, message, history=False)
        return self._in_order(state, stream, [message]), []

    def _ask(self, state: _Stream, stream: int, start: int, message: Message, history: bool):
        state.replay_start, state.replay_since, state.history = start, time.monotonic(), history
        state.got, state.held, state.replied_to = {}, [message], None
        return [], [ReplayRequest(stream, start)]

    def _bad(self, state: _Stream, stream: int, frames: list[bytes], error: WireError) -> None:
        self.problems.bad_frames += 1
        self.note(f"stream {stream}: {error.text}")
        # a readable sequence number still counts as received: a replay would send the same frame
        if len(frames) == 3 and state.replay_start is None:
            seq = decode_seq(frames[1])
            if isinstance(seq, int) and seq >= 0 and (state.expected is None or seq >= state.expected):
                state.expected = seq + 1

    # ------------------------------------------------------------------ replay

    def replayed(self, stream: int, frames: list) -> tuple[list[Applied], list[ReplayRequest]]:
        """Take one reply from stream ``stream``'s replay socket: ``[b"", seq, payload]``
        (9fbe6800a) or ``[b"", topic, seq, payload]`` (v0.5.23)."""
        state = self.streams[stream]
        reply = parse_replay(frames)
        if isinstance(reply, WireError):
            self.problems.bad_frames += 1
            self.note(f"stream {stream}: {reply.text}")
            return [], []
        seq = reply.seq
        if state.replay_start is None:
            return [], []              # a late reply to a replay already given up on
        if seq == END_SEQ:
            return self.finish_replay(stream, ended=True)
        if seq >= state.replay_start:
            state.replied_to = max(seq, state.replied_to or 0)
        batch = decode_batch(reply.payload, self.max_frame, self.wire)
        if isinstance(batch, WireError):
            self.problems.bad_frames += 1
            self.note(f"stream {stream}: replay seq {seq}: {batch.text}")
        elif seq >= state.replay_start and len(state.got) < MAX_HELD:
            state.got[seq] = Message(reply.topic or b"", seq, batch, self.wire or batch_wire(batch))
        return [], []

    def finish_replay(self, stream: int, why: str = "",
                      ended: bool = False) -> tuple[list[Applied], list[ReplayRequest]]:
        """End stream ``stream``'s replay: ``ended`` by its -1, or given up (``why``: a
        timeout; or cut short). Only an ended reply tells what the publisher had, so only
        then is a later gap among the held messages asked for again."""
        state = self.streams[stream]
        start, history = state.replay_start, state.history
        if start is None:
            return [], []
        if why:
            self.note(f"stream {stream}: replay {why}")
        held = {m.seq: m for m in state.held}
        got, state.replay_start, state.got, state.held = state.got, None, {}, []
        if state.expected is None:
            state.expected = start
        ordered = [{**held, **got}[s] for s in sorted({**held, **got})]
        if history and ordered and ordered[0].seq > start:
            self.note(f"stream {stream}: batches before seq {ordered[0].seq} are gone from the "
                      "publisher's buffer (the tree shows what came after)")
            state.expected = ordered[0].seq
        self.problems.recovered += sum(1 for seq in got if seq not in held and seq >= state.expected)
        cut = _later_gap(ordered, state.expected, state.replied_to) if ended else len(ordered)
        applied = self._in_order(state, stream, ordered[:cut])
        if cut == len(ordered):
            return applied, []
        # seqs past the reply's last did not exist when the publisher answered: it may still
        # hold them (a batch dropped live after the answer), so this is a gap like any other
        self.problems.gaps += 1
        expected = state.expected
        assert expected is not None   # set above, and _in_order only moves it on
        self.note(f"stream {stream}: gap, {_span(expected, ordered[cut].seq)} missing: asking replay")
        self._ask(state, stream, expected, ordered[cut], history=False)
        state.held = ordered[cut:]
        return applied, [ReplayRequest(stream, expected)]

    def replay_overdue(self, stream: int, timeout_s: float) -> bool:
        state = self.streams[stream]
        return state.replay_start is not None and time.monotonic() - state.replay_since > timeout_s

    # ------------------------------------------------------------------ applying

    def _in_order(self, state: _Stream, stream: int, messages: Sequence[Message]) -> list[Applied]:
        applied = []
        for message in messages:
            if state.expected is not None and message.seq < state.expected:
                if message.seq == 0:
                    self.problems.restarts += 1
                    self.note(f"stream {stream}: the publisher began again at seq 0")
                else:
                    self.problems.duplicates += 1
                    continue
            elif state.expected is not None and message.seq > state.expected:
                lost = message.seq - state.expected
                self.problems.unfilled += lost
                self.note(f"stream {stream}: {_span(state.expected, message.seq)} lost for good "
                          f"({lost} batch{'es' if lost > 1 else ''}: the tree may lack blocks or "
                          "keep some that are gone)")
            state.expected = message.seq + 1
            self._heard_wire(stream, message.wire)
            rank = message.batch.attn_dp_rank
            rank = state.rank if rank is None else rank
            for line in self.tree(rank).apply(message.batch, message.seq):
                self.note(f"rank {rank} seq {message.seq}: {line}")
            self.batches += 1
            done = Applied(stream, message.seq, rank, message)
            applied.append(done)
            for listener in self.listeners:
                listener(done)
        return applied


    def _heard_wire(self, stream: int, wire: str | None) -> None:
        # the first wire a stream speaks is shown, not logged; a change is news (a server upgraded)
        if wire is not None and self.wires.get(stream) != wire:
            if stream in self.wires:
                self.note(f"stream {stream}: now {WIRE_WORDS.get(wire, wire)}")
            self.wires[stream] = wire


def _later_gap(ordered: Sequence[Message], expected: int, replied_to: int | None) -> int:
    """The index in ``ordered`` of the first message after a gap that begins past
    ``replied_to`` (the reply's last seq), or ``len(ordered)`` if there is none. A gap that
    begins at or below it is one the publisher's buffer no longer had: asking again cannot
    fill it."""
    for index, message in enumerate(ordered):
        if message.seq > expected and replied_to is not None and expected > replied_to:
            return index
        expected = max(expected, message.seq + 1)
    return len(ordered)


def _span(first: int, end: int) -> str:
    return f"seq {first}" if end - first == 1 else f"seq {first} to {end - 1}"
