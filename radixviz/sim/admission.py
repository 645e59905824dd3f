"""Who joins the next prefill batch: the first release's admission rule, step by step.

The room is estimated, not measured: free slots plus what the tree could evict, minus what
the running requests are still expected to write (their remaining budget times the
policy's estimation ratio). Each candidate locks its matched path first, because a locked
path stops being evictable and so shrinks the room; if it no longer fits after that, the
lock is released again.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass
from collections.abc import Callable

if TYPE_CHECKING:
    from .request import Request
    from radixviz.cache import TokenToKVPool


@dataclass(frozen=True, slots=True)
class Decision:
    """Why one waiting request was or was not admitted (numbers as the rule saw them)."""
    rid: int
    prefix_len: int
    extend_len: int
    max_new: int
    batch_tokens: int        # tokens already promised to this batch before this request
    available: float         # room before this request's lock
    lock_delta: int          # change in evictable size from locking its path (<= 0)
    admitted: bool
    reason: str
    sorted_last: bool = False  # #2442's rule moved it to the back of the queue

    @property
    def need(self) -> int:
        return self.extend_len + self.max_new + self.batch_tokens


def estimate_available(pool: TokenToKVPool, cache, running: list[Request], ratio: float) -> float:
    """Free slots + evictable tokens - running requests' expected remaining tokens.

    The reserve is summed request by request (each remaining budget times the ratio), as
    the release summed it: multiplying the total once rounds differently in the last bits,
    and the strict ``<`` of the fit test can flip on that when a need equals the room.
    """
    reserved = sum(r.remaining_new_tokens() * ratio for r in running)
    return pool.available_size() + cache.evictable_size() - reserved


def trim_whole_match(req) -> None:
    """A prompt the tree holds whole still needs its last token computed to sample the next.

    The release trimmed inside the admission loop, after the policy had ordered the queue
    by the full match; trimming at match time would sort such a request behind others.
    """
    if req.extend_input_len == 0:
        req.prefix_len -= 1
        req.prefix_indices = req.prefix_indices[:req.prefix_len]
        req.extend_input_len = 1


def admit(queue: list[Request], cache, pool: TokenToKVPool, running: list[Request], ratio: float, *, free_rows: int,
          max_prefill_tokens: int, delay: Callable | None = None, explain: bool = True,
          sorted_last=(), load_back: Callable | None = None, rematch: Callable | None = None,
          stop_at_misfit: bool = False):
    """Go through ``queue`` (already in policy order); return ``(admitted, decisions)``.

    ``cache`` is the engine (radixviz.cache's facade: ``lock``, ``unlock``, ``evictable_size``).
    The walk goes through the whole queue, as the release's did: a request that does not
    fit is passed over and a later, smaller one may still get in. Admitted requests hold a
    lock on their path and one extra pool reference on each prefix slot.
    ``delay(req, admitted)`` (the hold-back option) may refuse a request for this round;
    ``sorted_last`` (#2442's picks) only marks the decisions: they were already put last.
    Stops when there is no free request row for another request (only a ``max_running``
    option makes that happen).
    ``explain=False`` skips building the Decision list (long queues, fast runs).
    ``stop_at_misfit``: the first request that does not fit ends the walk (v0.5.23's loop
    breaks there); the release's went on down the queue.
    ``load_back(req)`` (an engine with a host tier) runs once a request is admitted, with
    its lock held, as SGLang's ``init_load_back`` does: it may bring the part of the prompt
    found on the host back to the device; the room is then counted afresh. A load back may
    evict, so every request after the first one tried is matched again (``rematch(req)``)
    before its turn: what this round's earlier match found may be gone.
    """
    last = set(map(id, sorted_last))
    available = estimate_available(pool, cache, running, ratio)
    batch_tokens = batch_inputs = 0
    admitted: list = []
    decisions: list = []
    loads_tried = False
    for req in queue:
        if len(admitted) >= free_rows:
            break  # only with a max_running option: the release's table never ran out
        if loads_tried and rematch is not None:
            rematch(req)
        if req.extend_input_len == 0:  # checked here: the loop runs over the whole queue
            trim_whole_match(req)
        start = available
        delta, ok = 0, False
        if delay is not None and delay(req, admitted):
            reason = "held back: shares a prefix still being computed"
        elif req.extend_input_len + batch_inputs >= max_prefill_tokens:
            reason = "prefill token cap reached"
        elif not req.extend_input_len + req.max_new_tokens + batch_tokens < available:
            reason = "does not fit"
        else:
            delta = cache.lock(req.last_node)
            available += delta
            if req.extend_input_len + req.max_new_tokens + batch_tokens < available:
                ok, reason = True, "fits"
                if load_back is not None and req.host_hit_length:
                    loads_tried = True
                    if load_back(req):
                        reason = f"fits; {req.host_loaded} tokens loaded back from the host"
                    # loaded or not, it may have evicted: count the room afresh
                    available = estimate_available(pool, cache, running, ratio)
            else:
                # locking took its prefix out of the evictable room: undo
                available += cache.unlock(req.last_node)
                reason = "does not fit once its prefix is locked"
        stop = not ok and stop_at_misfit and not reason.startswith("held back")
        if stop:
            reason += "; admission stops here (v0.5.23)"
        if explain:
            decisions.append(Decision(req.rid, req.prefix_len, req.extend_input_len,
                                      req.max_new_tokens, batch_tokens, start, delta, ok, reason,
                                      id(req) in last))
        if stop:
            break
        if ok:
            pool.add_refs(req.prefix_indices, distinct=True)   # the tree's slots: each in one node
            admitted.append(req)
            batch_tokens += req.extend_input_len + req.max_new_tokens
            batch_inputs += req.extend_input_len
    return admitted, decisions
