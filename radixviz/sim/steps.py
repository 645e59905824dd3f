"""The passes of the scheduler loop: prefill, decode, finish, retract.

Functions of a ``Scheduler`` (``s``), kept apart so each reads as one step of the release.
(``s`` is left unannotated: scheduler.py imports this module, and a type import back would
close a circle; it reads some thirty of the loop's attributes, too many for a Protocol.)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import itertools

import torch

from radixviz.cache import match

from .policies import in_batch_deprioritized
from .request import RequestSpec

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .block_units import BlockPrompt
    from .request import Request


def match_key(s, req: Request) -> tuple | BlockPrompt:
    """The request's prompt cut to whole pages, made once and the same tuple every round,
    so the edge memo (edge_memo.py) answers its comparisons again until it finishes."""
    if req.match_key is None:
        # v0.5.23 matches at most the prompt's length minus one (or up to its logprob start)
        cap = getattr(s, "prefix_limit", None)   # a Scheduler's; a test's stand-in may have none
        limit = len(req.input_ids) if cap is None else cap(req)
        req.match_key = req.input_ids[:s.engine.whole_pages(limit)]
        if s.edge_memo is not None:
            s.edge_memo.watch(req.match_key)
    return req.match_key


def match_requests(s, queue: list[Request]) -> None:
    """Match each request against the tree (this may split nodes); note what is left to compute.

    A prompt the tree holds whole keeps its full match here: the policies order by it, and
    admission trims it afterwards (see ``admission.trim_whole_match``), as the release did.
    """
    if s.hooks.match(queue):   # the engine's own match (both tiers of the host tier's)
        return
    match = s.engine.match   # bound once: this loop runs for every waiting request
    for req in queue:
        prefix, last_node = match(match_key(s, req))
        n_prefix = prefix.shape[0]
        req.prefix_indices, req.last_node, req.prefix_len = prefix, last_node, n_prefix
        req.extend_input_len = len(req.input_ids) - n_prefix


def alloc_slots(s, need: int):
    """The release's allocation: try, and on failure evict and try again. How much is
    evicted is ``s.alloc_evict`` (scheduler.py): ``need`` tokens, as the 2024 release did,
    or the ``shortfall``, need minus what is free, as SGLang v0.5.23 does."""
    slots = s.pool.alloc(need)
    if slots is None:
        amount = need if s.alloc_evict == "need" else need - s.pool.available_size()
        s._evicted += s.engine.evict(amount)
        slots = s.pool.alloc(need)
    return slots


def prefill_pass(s):
    """Form a new batch from the waiting queue and prefill it; None if nobody was admitted."""
    if not s.waiting or len(s.running) > s.max_running_gate:
        return None
    match_requests(s, s.waiting)
    last = in_batch_deprioritized(s.waiting, s.in_batch_threshold) if s.in_batch_threshold else ()
    s.stats.delayed += len(last)
    ordered = s.order(s.waiting, s.cache, s.rng, last)
    admitted, decisions = s.admit(ordered, last)
    chosen = set(map(id, admitted))
    # the release kept the queue in the policy's order for the next round
    s.waiting = [r for r in ordered if id(r) not in chosen]
    queue_order = tuple((r.rid, r.prefix_len) for r in ordered) if s.record else ()
    if not admitted:
        s._last_attempt = (queue_order, decisions if s.record else ())
        return None
    s._last_attempt = None

    s.hooks.before_batch()
    rows = s.alloc_rows(len(admitted))
    need = sum(r.extend_input_len for r in admitted)
    slots = alloc_slots(s, need)
    while slots is None:
        # admission counted on this room; if it is not there, give requests back, never exit
        req = admitted.pop()
        s.req_pool.free(rows.pop())
        release_admission(s, req)
        s.waiting.insert(0, req)
        s._event("prefill-deferred", req.rid, "no room to prefill after eviction: back to the queue")
        need -= req.extend_input_len
        slots = alloc_slots(s, need) if admitted else s.pool.alloc(0)
    if not admitted:   # every one given back (an engine whose pools admission cannot see whole): decode
        return None

    table = s.req_pool.req_to_token
    hit = start = host_hit = 0
    for req, row in zip(admitted, rows):
        n_prefix, n_input = req.prefix_len, len(req.input_ids)
        new = slots[start:start + req.extend_input_len]
        start += req.extend_input_len
        req.req_pool_idx, req.kv_row = row, table[row]
        req.kv_row[:n_prefix] = req.prefix_indices
        req.kv_row[n_prefix:n_input] = new
        req.output_ids = [s.model.extend(req.input_ids, req.prefix_indices, new)]
        hit += n_prefix
        host_hit += req.host_loaded
    s.stats.host_hit_tokens += host_hit
    s.stats.prefill_batches += 1
    s.stats.hit_tokens += hit
    s.stats.prefill_computed += need
    s.running.extend(admitted)
    finished = finish_done(s)
    if s.cache_unfinished:
        for req in admitted:
            if not req.finished:
                cache_unfinished(s, req)
    return s._finish_pass("prefill", queue_order, decisions if s.record else (),
                          [r.rid for r in admitted], finished, hit, need, host_hit)


def decode_pass(s):
    """One decode step: every running request computes the KV of its newest token."""
    slots = alloc_slots(s, len(s.running))
    while slots is None and s.running:
        # the release exited here; later ones retracted: fewest outputs, then longest prompt
        victim = min(s.running, key=lambda r: (len(r.output_ids), -len(r.input_ids)))
        retract(s, victim)
        slots = alloc_slots(s, len(s.running))
    table = s.req_pool.req_to_token
    if s.running:
        rows = torch.tensor([r.req_pool_idx for r in s.running], device=table.device)
        cols = torch.tensor([r.kv_len for r in s.running], device=table.device)
        table[rows, cols] = slots
        decode = s.model.decode
        for req, slot in zip(s.running, slots):
            tokens = req.input_ids + tuple(req.output_ids)
            req.output_ids.append(decode(tokens, req.kv_row[:len(tokens) - 1], slot))
    computed = len(s.running)
    s.stats.decode_steps += 1
    s.stats.decode_computed += computed
    queue_order, decisions = s._last_attempt or ((), ())
    s._last_attempt = None
    finished = finish_done(s)
    return s._finish_pass("decode", queue_order, decisions, (), finished, 0, computed)


def finish_done(s) -> list:
    """Finish every running request that reached its budget; return their rids."""
    done = [r for r in s.running if r.finished]
    if done:
        s.running = [r for r in s.running if not r.finished]
        for req in done:
            finish(s, req)
    return [r.rid for r in done]


def finish(s, req: Request) -> None:
    """Put the request's sequence into the tree (the engine frees the slots it already held
    and a partial last page), unlock. The priority reaches an engine that has priorities
    (SGLang passes it from both cache_finished_req and cache_unfinished_req)."""
    n = req.kv_len
    if s.insert != "release":   # the release (#4) kept the newest token, which has no slot yet
        tokens = req.input_ids + tuple(req.output_ids[:n - len(req.input_ids)])
    else:
        tokens = req.input_ids + tuple(req.output_ids)
    row = req.kv_row[:n]
    # the unit engine copies the slots it keeps (unit_engine.py); another engine keeps what it is given
    s.hooks.insert_finished(req, tokens, row if s.block_units else row.clone())
    s.req_pool.free(req.req_pool_idx)
    s.engine.unlock(req.last_node)
    req.req_pool_idx, req.kv_row = -1, None
    s.stats.finished += 1
    s.stats.note_finished(req)
    if s.edge_memo is not None and req.match_key is not None:
        s.edge_memo.forget(req.match_key)     # no request matches this prompt again
    s.outputs[req.rid] = tuple(req.output_ids)
    if req.then is not None:
        for new in s.submit(req.then):
            s._event("follow-up", new.rid, f"the session of request #{req.rid} sends its next request")
    if req.follow_ups:
        (text, max_new), later = req.follow_ups[0], req.follow_ups[1:]
        history = req.input_ids + tuple(req.output_ids)
        for new in s.submit(RequestSpec(history + tuple(text), max_new, later, priority=req.priority,
                                        logprob_start_len=req.logprob_start_len)):
            s._event("follow-up", new.rid, f"the chat of request #{req.rid} comes back with its history")


def release_admission(s, req: Request) -> None:
    """Undo an admission that was never prefilled: its prefix refs and its lock."""
    s.pool.free(req.prefix_indices)
    s.engine.unlock(req.last_node)


def retract(s, req: Request) -> None:
    """Send a running request back to the queue; its own KV is lost, the tree's stays."""
    s.pool.free(req.kv_row[:req.kv_len])
    s.engine.unlock(req.last_node)
    s.req_pool.free(req.req_pool_idx)
    s.running = [r for r in s.running if r is not req]
    lost = len(req.output_ids)
    req.output_ids, req.req_pool_idx, req.kv_row = [], -1, None
    req.times_retracted += 1
    req.prefix_indices, req.last_node, req.prefix_len = None, None, 0
    s.waiting.append(req)
    s.stats.retracted += 1
    s._event("retracted", req.rid, f"out of memory while decoding: back to the queue, "
                                   f"{lost} generated tokens to redo")


def cache_unfinished(s, req: Request) -> None:
    """#418 (2024-05-13, ``cache_filled_batch``; ``cache_unfinished_req`` since #977): once a
    request's prefill has run, put its prompt in the tree, so that the next round's requests
    can hit it before this one finishes.

    As in #418: insert the prompt with the request's slots; the slots it computed for tokens
    the tree already held (an earlier request of the same batch inserted them a moment ago)
    are duplicates and go back to the pool; the request's row then points at the tree's
    copy, and its lock moves from the admission's node to the node ending its prompt. Our
    pool keeps the release's bookkeeping (a running request holds one reference to every
    slot it reads): the insert takes the request's references over (the engine keeps the
    new ones and frees the duplicates, the prefix's included), then the request takes one
    on each slot of the tree's copy, so a prefix slot ends where it was. With pages, only
    whole pages go in; the partial last page stays the request's own, as today.
    """
    if s.hooks.cache_unfinished(req):   # the engine's own checkpoint (the unified tree's)
        return
    n = s.engine.whole_pages(len(req.input_ids))
    own = req.prefix_len      # the row's slots from here on are the ones this request computed
    if n <= own:
        return
    tokens = req.input_ids[:n]
    s.engine.insert(tokens, req.kv_row[:n].clone(), req.priority)
    cached, last_node = s.engine.match(tokens)
    s.pool.add_refs(cached[:n])
    req.kv_row[own:n] = cached[own:n]
    s.engine.unlock(req.last_node)
    s.engine.lock(last_node)
    req.last_node = last_node


def make_hold_back(s):
    """A stricter rule than SGLang ever shipped: refuse, this round, a request that shares at
    least ``hold_back_threshold`` tokens beyond its cached prefix with a running request or
    one already admitted to this batch. (radixviz once called this #2442; #2442 only
    reorders the waiting queue: ``policies.in_batch_deprioritized``.)
    """
    in_flight = [r.input_ids for r in s.running]

    def hold_back(req: Request, admitted: Sequence[Request]) -> bool:
        for other in itertools.chain(in_flight, (a.input_ids for a in admitted)):
            if match(other, req.input_ids) - req.prefix_len >= s.hold_back_threshold:
                s.stats.held_back += 1
                return True
        return False
    return hold_back
