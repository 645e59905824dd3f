"""The watcher's state, fed frames by whatever carries them (sockets, a recording).

Each stream (one publisher: one DP rank's port) has its next expected sequence number. Only
a batch that is applied moves it on: a payload that does not decode leaves it, so the next
good batch shows a gap, and a replay socket is asked for the lost one like any other.

A message past the expected number is a gap: with a replay socket the core asks for
everything from the expected number (``ReplayRequest``) and holds the live messages that
keep coming. The replies come in sequence order and are applied as they come (nothing but
the held live messages waits, within ``MAX_HELD`` messages and ``MAX_HELD_BYTES``): a reply
that skips numbers says the publisher's buffer no longer has them, so what the held
messages do not fill is lost for good and counted. When the reply ends (sequence -1, or the
caller's timeout) the held messages follow in order. The reply holds what the publisher had
when it answered, so a gap among the held messages past the last seq it returned (a batch
dropped live after the publisher answered) is asked for again, from the first missing seq;
each such ask starts later than the one before, so asking ends. Without a replay socket a
gap is lost at once. The first message of a stream with a replay socket asks for
everything from 0, so a watcher that joins a running server still sees the blocks stored
before it came (as far as the publisher's buffer goes back).

A sequence number further ahead than the stream could have sent (``plausible``: a damaged
frame, or one forged) is said and not applied, so it cannot make every later batch look
old; two in a row that carry on from it are a publisher that numbers afresh, and followed.

Trees are kept per DP rank: the batch's ``attn_dp_rank``, or the stream's rank when the
batch has none; at most ``max_ranks`` of them, and ``max_tokens`` tokens in all.
"""
from __future__ import annotations

import threading
from bisect import bisect_left, insort
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from collections.abc import Callable

from radixviz.collector import collector_paused

from .blocks import DEFAULT_MAX_BLOCKS, DEFAULT_MAX_TOKENS, BlockTree, Budget, Problems
from .messages import (DEFAULT_MAX_FRAME, END_SEQ, Message, WireError, decode_batch, parse_message,
                       parse_replay)
from .events import WIRE_WORDS, batch_wire

if TYPE_CHECKING:
    from collections.abc import Sequence

LOG_LINES = 500          # the log keeps the newest lines only
MAX_HELD = 100_000       # live messages held during one replay (past it the replay is cut short)
MAX_HELD_BYTES = 256 * 2 ** 20   # their payloads' bytes, likewise
LARGE_PAYLOAD = 1 << 16  # bytes: a batch past this is handled with the collector paused (radixviz/collector.py)
DEFAULT_MAX_RANKS = 256  # DP ranks given a tree; a batch of another rank is counted, not applied
# how far a sequence number may run ahead of the expected one: a publisher sends a batch per
# scheduler step that changed the cache, far below this rate, and a watcher that stopped
# reading (a laptop asleep) has been away for the seconds it has been away
PLAUSIBLE_AHEAD = 1_000_000
PLAUSIBLE_PER_S = 100_000


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
    last_applied_at: float = 0.0             # when a batch last moved ``expected`` on
    replay_start: int | None = None          # while a replay is under way
    replay_since: float = 0.0
    history: bool = False                    # this replay fetches what came before we joined
    replied: bool = False                    # a reply of this replay came
    replied_to: int | None = None            # the last seq the reply returned (decoded or not)
    held: list = field(default_factory=list)  # live messages that came during the replay
    held_bytes: int = 0
    held_seqs: set = field(default_factory=set)
    jumped_to: int | None = None             # an implausible seq just seen (and one after it)
    jump_streak: int = 0


class WatchCore:
    def __init__(self, ranks: int = 1, replay: bool = False, max_frame: int = DEFAULT_MAX_FRAME,
                 max_blocks: int = DEFAULT_MAX_BLOCKS, max_tokens: int = DEFAULT_MAX_TOKENS,
                 max_ranks: int = DEFAULT_MAX_RANKS, wire: str | None = None) -> None:
        self.problems = Problems()
        self.wire = wire                    # read every payload as this wire (None: tell each's)
        self.wires: dict[int, str] = {}     # stream -> the wire its last batch came in
        self.max_frame, self.max_blocks, self.max_ranks = max_frame, max_blocks, max_ranks
        self.budget = Budget(max_tokens)   # tokens held by every rank's tree together
        self.streams = [_Stream(rank, replay) for rank in range(ranks)]
        self.trees: dict[int, BlockTree] = {}
        self.log: deque = deque(maxlen=LOG_LINES)
        self._log_lock = threading.Lock()   # the app reads the log while its feeder notes
        self.batches = 0
        self.notes = 0           # lines noted so far (the log holds the newest LOG_LINES)
        self.record_changes = False   # trees keep the changes each batch made (the app's history)
        self._refused_ranks: set = set()
        # called right after each batch is applied, while the trees show its effect (a replay
        # applies several at once: a caller reading the trees later sees only the last)
        self.listeners: list[Callable[[Applied], None]] = []

    def tree(self, rank: int) -> BlockTree:
        if rank not in self.trees:
            # the app draws these (through copies): they keep what drawing needs as they go
            self.trees[rank] = BlockTree(self.problems, self.max_blocks, budget=self.budget,
                                         changes=[] if self.record_changes else None,
                                         indexed=self.record_changes)
        return self.trees[rank]

    def note(self, text: str) -> None:
        with self._log_lock:
            self.log.append(text)
            self.notes += 1

    def notes_since(self, count: int) -> list[str]:
        """The lines noted after the first ``count`` (those still in the log)."""
        with self._log_lock:
            new = self.notes - count
            return list(self.log)[-new:] if new > 0 else []

    def last_notes(self, count: int) -> list[str]:
        with self._log_lock:
            return list(self.log)[-count:]

    # ------------------------------------------------------------------ live frames

    def live(self, stream: int, frames: list) -> tuple[list[Applied], list[ReplayRequest]]:
        """Take one message from stream ``stream``'s SUB socket."""
        with collector_paused(len(frames[-1]) > LARGE_PAYLOAD if frames else False):
            return self._live(stream, frames)

    def _live(self, stream: int, frames: list) -> tuple[list[Applied], list[ReplayRequest]]:
        state = self.streams[stream]
        message = parse_message(frames, self.max_frame, self.wire)
        if isinstance(message, WireError):
            self.problems.bad_frames += 1
            self.note(f"stream {stream}: {message.text}")
            return [], []
        if not self._plausible(state, stream, message.seq):
            return [], []
        if state.replay_start is not None:
            if len(state.held) >= MAX_HELD or state.held_bytes >= MAX_HELD_BYTES:
                self.note(f"stream {stream}: {len(state.held):,} messages ({state.held_bytes:,} bytes) "
                          "held during a replay: cutting it short")
                done = self.finish_replay(stream)
                more = self._live(stream, frames)
                return done[0] + more[0], done[1] + more[1]
            self._hold(state, message, frames)
            return [], []
        if state.expected is None and state.has_replay and message.seq > 0:
            return self._ask(state, stream, 0, message, frames, history=True)
        if state.expected is not None and message.seq > state.expected:
            self.problems.gaps += 1
            if state.has_replay:
                self.note(f"stream {stream}: gap, {_span(state.expected, message.seq)} missing: asking replay")
                return self._ask(state, stream, state.expected, message, frames, history=False)
        return self._in_order(state, stream, [message]), []

    def _plausible(self, state: _Stream, stream: int, seq: int) -> bool:
        """Whether ``seq`` can follow what the stream sent so far; one that cannot is said
        (once a run) and left out, unless the one before it was left out too and this one
        carries on from it: then the publisher numbers afresh, and is followed."""
        expected = state.expected
        if expected is None or seq == 0:
            state.jumped_to = None
            return True
        if not _too_far(seq - expected, state.last_applied_at):
            state.jumped_to = None
            return True
        if state.jumped_to is not None and seq == state.jumped_to + 1:
            state.jump_streak += 1
            if state.jump_streak >= 2:
                self.note(f"stream {stream}: the publisher numbers from seq {seq - 2:,} on: following it")
                state.expected, state.jumped_to = seq, None
                return True
        else:
            state.jump_streak = 0
            if state.jumped_to is None:
                self.note(f"stream {stream}: seq {seq:,} is {seq - expected:,} past seq {expected:,}, more "
                          "than the publisher could have sent: left out (a damaged or forged frame)")
        state.jumped_to = seq
        self.problems.implausible += 1
        return False

    def _hold(self, state: _Stream, message: Message, frames: list) -> None:
        insort(state.held, message, key=_seq)   # kept in order: live seqs arrive rising, so an append
        state.held_seqs.add(message.seq)
        state.held_bytes += len(frames[-1]) if frames else 0

    def _ask(self, state: _Stream, stream: int, start: int, message: Message, frames: list, history: bool):
        state.replay_start, state.replay_since, state.history = start, time.monotonic(), history
        state.replied, state.replied_to = False, None
        state.held, state.held_seqs, state.held_bytes = [], set(), 0
        self._hold(state, message, frames)
        return [], [ReplayRequest(stream, start)]

    # ------------------------------------------------------------------ replay

    def replayed(self, stream: int, frames: list) -> tuple[list[Applied], list[ReplayRequest]]:
        """Take one reply from stream ``stream``'s replay socket: ``[b"", seq, payload]``
        (9fbe6800a) or ``[b"", topic, seq, payload]`` (v0.5.23). A reply in order is applied
        at once; the batches applied are returned."""
        with collector_paused(len(frames[-1]) > LARGE_PAYLOAD if frames else False):
            return self._replayed(stream, frames)

    def _replayed(self, stream: int, frames: list) -> tuple[list[Applied], list[ReplayRequest]]:
        state = self.streams[stream]
        reply = parse_replay(frames)
        if isinstance(reply, WireError):
            self.problems.bad_frames += 1
            self.note(f"stream {stream}: {reply.text}")
            return [], []
        seq = reply.seq
        start = state.replay_start
        if start is None:
            return [], []              # a late reply to a replay already given up on
        if seq == END_SEQ:
            return self.finish_replay(stream, ended=True)
        if seq < start or (state.expected is not None and seq < state.expected):
            return [], []              # not asked for, or applied already
        if _too_far(seq - start, state.replay_since):
            self.problems.implausible += 1
            self.note(f"stream {stream}: replay seq {seq:,} is far past the seq {start:,} asked for: left out")
            return [], []
        state.replied_to = max(seq, state.replied_to or 0)
        batch = decode_batch(reply.payload, self.max_frame, self.wire)
        if isinstance(batch, WireError):
            self.problems.bad_frames += 1
            self.note(f"stream {stream}: replay seq {seq}: {batch.text}")
            return [], []
        if not state.replied:
            self._first_reply(state, stream, seq)
        state.replied = True
        # what the reply skipped the publisher no longer has: held messages before it go first
        applied = self._in_order(state, stream, self._take_held(state, below=seq))
        if seq in state.held_seqs:   # came live too: the reply's copy is applied, the held one dropped
            self._take_held(state, below=seq + 1)
        else:
            self.problems.recovered += 1
        message = Message(reply.topic or b"", seq, batch, self.wire or batch_wire(batch))
        return applied + self._in_order(state, stream, [message]), []

    def _first_reply(self, state: _Stream, stream: int, seq: int) -> None:
        """Before the first reply of a replay is applied: the history a joining watcher asked
        for starts where the publisher's buffer does."""
        if state.expected is None:
            start = state.replay_start
            assert start is not None
            if state.history and seq > start:
                self._history_gone(stream, seq)
            # history: from the oldest the publisher still has (or a held one, if older)
            state.expected = min([seq, *state.held_seqs]) if state.history else start

    def _history_gone(self, stream: int, seq: int) -> None:
        self.note(f"stream {stream}: batches before seq {seq} are gone from the "
                  "publisher's buffer (the tree shows what came after)")

    def _take_held(self, state: _Stream, below: int | None = None) -> list:
        """The held messages (those before ``below``), in order, out of the hold."""
        held = state.held
        cut = len(held) if below is None else bisect_left(held, below, key=_seq)
        taken, state.held = held[:cut], held[cut:]
        for message in taken:
            state.held_seqs.discard(message.seq)
        return taken

    def finish_replay(self, stream: int, why: str = "",
                      ended: bool = False) -> tuple[list[Applied], list[ReplayRequest]]:
        """End stream ``stream``'s replay: ``ended`` by its -1, or given up (``why``: a
        timeout; or cut short). Only an ended reply tells what the publisher had, so only
        then is a later gap among the held messages asked for again."""
        state = self.streams[stream]
        start = state.replay_start
        if start is None:
            return [], []
        if why:
            self.note(f"stream {stream}: replay {why}")
        state.replay_start = None
        ordered = self._take_held(state)
        state.held_bytes = 0
        if state.expected is None:
            state.expected = ordered[0].seq if state.history and ordered else start
            if state.history and ordered and ordered[0].seq > start:
                self._history_gone(stream, ordered[0].seq)
        # held messages the replies covered were applied from them
        ordered = [m for m in ordered if m.seq >= state.expected or m.seq == 0]
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
        self._ask(state, stream, expected, ordered[cut], [], history=False)
        for message in ordered[cut + 1:]:
            self._hold(state, message, [])
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
                          f"({lost:,} batch{'es' if lost > 1 else ''}: the tree may lack blocks or "
                          "keep some that are gone)")
            state.expected = message.seq + 1
            state.last_applied_at = time.monotonic()
            self._heard_wire(stream, message.wire)
            rank = message.batch.attn_dp_rank
            rank = state.rank if rank is None else rank
            if rank not in self.trees and len(self.trees) >= self.max_ranks:
                self._refuse_rank(rank)
                continue
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

    def _refuse_rank(self, rank: int) -> None:
        self.problems.ranks_refused += 1
        if len(self._refused_ranks) < 10 and rank not in self._refused_ranks:
            self._refused_ranks.add(rank)
            self.note(f"rank {rank}: not kept, {self.max_ranks:,} DP ranks held already "
                      "(--max-ranks raises it); its batches are counted")


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


def _seq(message: Message) -> int:
    return message.seq


def _too_far(ahead: int, since: float) -> bool:
    """Whether a seq ``ahead`` of the one expected is more than the publisher could have sent
    since ``since`` (a monotonic time)."""
    return ahead > PLAUSIBLE_AHEAD + PLAUSIBLE_PER_S * (time.monotonic() - since)
