"""The scheduler of SGLang v0.5.23 (2026-10-30), in the simulation's loop: ``scheduler="v0.5.23"``.

The rules read from the wheel (``managers/schedule_policy.py``, ``managers/schedule_batch.py``,
``arg_groups/fields/schedule.py``, ``managers/scheduler.py``; docs/simulation-api.md gives lines):

- **fcfs by default** (``schedule_policy`` defaults to ``"fcfs"``; since #3988, 2025-03-03);
- **the fallback**: under ``lpm`` or ``hrrn``, more than 128 waiting requests
  (``WAITING_QUEUE_PREFIX_MATCH_MAX``) turn the sorting off for that round: the queue keeps the
  order it has (``_determine_active_policy``), which is the last round's sorted order plus
  the newcomers at the back, not arrival order;
- **the match cap**: a request matches at most its length minus one token, or up to its
  ``logprob_start_len`` when it asks for input logprobs (``_compute_max_prefix_len``; the
  key is cut there, then to whole pages); the policies count host hits too, capped the same
  (``num_matched_prefix_tokens``);
- **the in-batch rule** (#2442's, always on in v0.5.23): under a cache-aware policy a request
  whose own match is at most 32 tokens and that shares 32 or more with an earlier waiting
  one is sorted last (``lpm``, ``hrrn``, ``shortest-prefill-first``; ``weight`` ignores it);
- ``weight`` (SGLang's ``dfs-weight``): depth first through the tree, the child holding
  more waiting requests first, each node's own requests after its children, in queue order
  (``_dfs_weight_order`` in ``mem_cache/base_prefix_cache.py``: a node weighs only the
  requests that end under it; the release added one a node and sorted a node's own requests
  by their match);
- ``lpm``: most matched tokens first; ``hrrn``: highest response ratio first, the ratio
  growing with the prefill tokens the server computed since the request arrived divided by
  the tokens it still has to compute (``_sort_by_hrrn``); ``shortest-prefill-first``: fewest
  tokens left to compute first, ties by arrival (``_sort_by_shortest_prefill``);
- **admission stops at the first request that does not fit** (``add_one_req`` answers
  other than CONTINUE end the loop), where the first release's went on down the queue.

What stays the release's here: one match a round (with the cap) for every waiting request,
the room estimate and its ratios, no chunked prefill (a request past the prefill budget
waits), no priority scheduling. hrrn's ties go by arrival (SGLang's by request id, a random
hex string). The 2024 and 2026 engines keep the release's loop unless asked.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .policies import in_batch_deprioritized, shuffled

if TYPE_CHECKING:
    from collections.abc import Callable

RELEASE_LOOP, TODAYS_LOOP = "2024", "v0.5.23"   # the schedulers, by the SGLang they follow
SCHEDULERS = (RELEASE_LOOP, TODAYS_LOOP)
DEFAULT_POLICY = "fcfs"
WAITING_QUEUE_PREFIX_MATCH_MAX = 128
IN_BATCH_THRESHOLD = 32      # IN_BATCH_PREFIX_CACHING_CHECK_ and _DEPRIORITIZE_THRESHOLD
FALLS_BACK = ("lpm", "hrrn")
CACHE_AWARE = ("lpm", "weight", "hrrn", "shortest-prefill-first")
# name -> the release's room-estimation ratio this loop keeps (fcfs the release's 0.5)
POLICIES_0523 = {"fcfs": 0.5, "lpm": 0.4, "random": 0.4, "weight": 0.4, "hrrn": 0.4,
                 "shortest-prefill-first": 0.4}


def loop_words(scheduler: str | None) -> str:
    """The scheduler a run used, in words for a report's first line."""
    if scheduler == TODAYS_LOOP:
        return "SGLang v0.5.23's (2026-10-30: its orders, match cap and admission)"
    return "SGLang's first release (January 2024)"


def max_prefix_len(req) -> int:
    """The most a request may match: its length minus one, or its logprob start when it
    asks for input logprobs from a position (``logprob_start_len`` >= 0)."""
    cap = len(req.input_ids) - 1
    if req.logprob_start_len >= 0:
        cap = min(cap, req.logprob_start_len)
    return max(cap, 0)


def matched(req) -> int:
    """``num_matched_prefix_tokens``: device and host hit, capped as the match is."""
    return min(req.prefix_len + req.host_hit_length, max_prefix_len(req))


def active_policy(policy: str, waiting: int) -> str:
    """The policy a round runs: fcfs for lpm and hrrn past 128 waiting requests."""
    return "fcfs" if policy in FALLS_BACK and waiting > WAITING_QUEUE_PREFIX_MATCH_MAX else policy


def _lpm(queue, back, s):
    return sorted(queue, key=lambda r: float("inf") if id(r) in back else -matched(r))


def _hrrn(queue, back, s):
    processed = s.stats.prefill_computed

    def key(r):
        if id(r) in back:
            return (float("inf"), r.rid)
        uncached = max(0, len(r.input_ids) - matched(r))
        if uncached <= 0:
            return (-float("inf"), r.rid)
        return (-max(0, processed - r.arrival_work) / uncached, r.rid)
    return sorted(queue, key=key)


def _shortest_prefill(queue, back, s):
    return sorted(queue, key=lambda r: (id(r) in back, max(1, len(r.input_ids) - matched(r)), r.rid))


def dfs_weight(queue, cache) -> list:
    """v0.5.23's depth-first order (see the module's docstring); no recursion: a tree can be deep."""
    ending: dict = {}
    for req in queue:
        ending.setdefault(req.last_node, []).append(req)
    weight = {node: len(reqs) for node, reqs in ending.items()}
    stack = [(cache.root_node, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            weight[node] = weight.get(node, 0) + sum(weight.get(c, 0) for c in node.children.values())
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(list(node.children.values())))
    order: list = []
    stack = [(cache.root_node, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.extend(ending.get(node, ()))
            continue
        stack.append((node, True))
        heaviest = sorted(node.children.values(), key=lambda c: -weight.get(c, 0))
        stack.extend((c, False) for c in reversed(heaviest))
    if len(order) != len(queue):
        raise RuntimeError("weight order lost a request: a last_node is no longer in the tree")
    return order


_SORTS: dict[str, Callable] = {"lpm": _lpm, "hrrn": _hrrn, "shortest-prefill-first": _shortest_prefill}


def order_for(policy: str, s) -> Callable:
    """The queue order of ``policy`` for Scheduler ``s`` (the loop's ``order`` signature)."""
    if policy not in POLICIES_0523:
        raise ValueError(f"unknown policy {policy!r} for the v0.5.23 scheduler: "
                         f"choose from {', '.join(POLICIES_0523)}")

    def order(queue, cache, rng, last=()):
        active = active_policy(policy, len(queue))
        s.round_policy = active
        s.stats.fallback_rounds += active != policy
        if active == "fcfs":
            return list(queue)
        if active == "random":
            return shuffled(queue, cache, rng)
        if active == "weight":
            return dfs_weight(queue, cache)
        picked = in_batch_deprioritized(queue, IN_BATCH_THRESHOLD)
        s.stats.delayed += len(picked)
        return _SORTS[active](queue, set(map(id, picked)), s)
    return order
