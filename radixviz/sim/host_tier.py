"""The host tier in the 2024 scheduler loop: what SGLang's scheduler does for HiRadixCache.

Three places change, as in SGLang's scheduler of March 2026 (``schedule_policy.py``,
``scheduler.py``): every round starts by acknowledging the copies that finished
(``check_hicache_events``); matching reports, beside the device prefix, how many more prompt
tokens the host holds and the deepest node with a host copy; and admitting a request whose
prompt hits on the host loads that part back (``init_load_back``) while the request's lock
is held, moving the lock down to the loaded node. The loop's own rules stay the 2024 ones.
"""
from __future__ import annotations

import torch


def match_tiers(s, queue) -> None:
    """``steps.match_requests`` for an engine with a host tier: the device prefix as usual,
    plus the host hit of each request."""
    match, whole_pages = s.engine.match_tiers, s.engine.whole_pages
    for req in queue:
        if req.match_key is None:
            req.match_key = req.input_ids[:whole_pages(len(req.input_ids))]
        found = match(req.match_key)
        prefix = found.device_indices
        n_prefix = prefix.shape[0]
        req.prefix_indices, req.last_node, req.prefix_len = prefix, found.last_device_node, n_prefix
        req.extend_input_len = len(req.input_ids) - n_prefix
        req.host_hit_length, req.last_host_node, req.host_loaded = found.host_hit_length, found.last_host_node, 0


def rematch(s, req) -> None:
    """Match ``req`` again. radixviz's loop does it for the requests after a load back in the
    same round: the load's eviction may have taken the prefix this round's match found
    (SGLang matches each request once per round and takes the result on trust)."""
    match_tiers(s, [req])   # (admission trims a prompt the tree now holds whole, as ever)


def load_back(s, req) -> int:
    """Load the host-only part of ``req``'s prompt back to the device (the request already
    holds a lock on ``req.last_node``); return the tokens loaded (0: below the threshold, or
    no room). On success the request's prefix grows and its lock moves to the loaded node."""
    if not req.host_hit_length:
        return 0
    slots, node = s.engine.load_back(req.last_host_node)
    loaded = len(slots)
    if not loaded:
        return 0
    s.engine.lock(node)          # SGLang: _req_inc_lock_ref on the new last node ...
    s.engine.unlock(req.last_node)   # ... after _lock_node's temporary lock on the old one
    req.prefix_indices = torch.cat([req.prefix_indices, slots])
    req.prefix_len += loaded
    req.extend_input_len -= loaded
    req.last_node, req.host_loaded = node, loaded
    if req.extend_input_len == 0:   # the whole prompt came back: its last token is still computed
        req.prefix_len -= 1
        req.prefix_indices = req.prefix_indices[:req.prefix_len]
        req.extend_input_len = 1
        req.host_loaded -= 1
    return loaded
