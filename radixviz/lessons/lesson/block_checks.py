"""Prediction checks that need more than one field of one result.

- ``split_edges``: the edge of each new upper node that the block's first operation cut
  off, in order ("which node does the split create?");
- ``first_offered.POLICY`` / ``last_offered.POLICY``: the block's ``match`` operations
  stand for the waiting queue, in arrival order; the key of the request the scheduling
  policy offers a place first (or last). POLICY is ``lpm``, ``fcfs`` or ``weight``, or
  ``lpm-2442`` / ``weight-2442`` with #2442's in-batch rule, computed by the simulation's
  own policy code (``radixviz.sim.policies``);
- KV events of the block's first operation: ``kv_events`` (how many), ``stored_pages``,
  ``removed_pages`` (of that kind), ``stored_after`` (the tokens of the page the first
  stored page chains from, ``none`` under the root), ``stored_known`` (stored pages whose
  block hash an earlier operation already reported); ``created_ns`` (the namespace of the
  leaf it created, ``none`` outside any);
- routing (route_checks.py): ``route.ROUTER.N``, ``routes.ROUTER.N``, ``reused.ROUTER.N``,
  ``best_hit.WORKLOAD``, ``over_half.WORKLOAD.ROUTER``.
"""
from __future__ import annotations

import random
from types import SimpleNamespace
from typing import TYPE_CHECKING

from radixviz.sim.policies import IN_BATCH_THRESHOLD, order_queue

from radixviz.cache.hashes import hash_str_to_int64

from ..route_checks import is_route_check, route_value
from ..scenario import edge_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...script.session import Session
    from radixviz.script.frames import OpRecord


_POLICIES = ("lpm", "fcfs", "weight", "lpm-2442", "weight-2442")
KV_CHECKS = ("kv_events", "stored_pages", "removed_pages", "stored_after", "stored_known", "created_ns")
NAMES = ("split_edges", *(f"{end}_offered.{p}" for end in ("first", "last") for p in _POLICIES),
         *KV_CHECKS, "route.ROUTER.N", "routes.ROUTER.N", "reused.ROUTER.N", "best_hit.WORKLOAD",
         "over_half.WORKLOAD.ROUTER")


def is_block_check(check: str) -> bool:
    return check in NAMES or is_route_check(check)


def block_value(check: str, records: Sequence[OpRecord], session: Session):
    """What the engine says for a block check; KeyError when ``check`` is not one."""
    if is_route_check(check):
        return route_value(check, records)
    if check in KV_CHECKS:
        return kv_value(check, records[0], session)
    if check == "split_edges":
        frames = session.frames[records[0].first_frame:records[0].last_frame + 1]
        return [edge_text(f.tree.nodes[f.nodes[0]].key) for f in frames if f.kind == "split"]
    end, _, policy = check.partition("_offered.")
    if end not in ("first", "last") or policy not in _POLICIES:
        raise KeyError(check)
    order = offered_order(policy, records, session)
    return order[0] if end == "first" else order[-1]


def offered_order(policy: str, records: Sequence[OpRecord], session: Session) -> list[str]:
    """The keys of the block's matches, in the order ``policy`` offers them places."""
    live = {}
    stack = [session.cache.root_node]
    while stack:
        node = stack.pop()
        live[node.id] = node
        stack.extend(node.children.values())
    queue = [SimpleNamespace(rid=i, input_ids=r.op.key, prefix_len=r.result["matched"],
                             last_node=live[r.result["last_node"]])
             for i, r in enumerate(records) if r.op.name == "match"]
    if not queue:
        raise KeyError("no match operations in the block to order")
    name, _, rule = policy.partition("-")
    ordered = order_queue(name, queue, session.cache, random.Random(0),
                          IN_BATCH_THRESHOLD if rule == "2442" else None)
    return [edge_text(r.input_ids) for r in ordered]


def kv_value(check: str, record: OpRecord, session: Session):
    """The KV-event and namespace checks of one operation (see the module's doc)."""
    events = record.kv_events
    if check == "kv_events":
        return len(events)
    if check in ("stored_pages", "removed_pages"):
        kind = check.partition("_")[0]
        return sum(1 for e in events if e.kind == kind)
    stored = [e for e in events if e.kind == "stored"]
    if check == "stored_after":
        if not stored or stored[0].parent_block_hash is None:
            return "none"
        return _page_named(session, stored[0].parent_block_hash)
    if check == "stored_known":
        earlier = {b for r in session.records[:record.index] for e in r.kv_events
                   if e.kind == "stored" for b in e.block_hashes}
        return sum(1 for e in stored if e.block_hashes[0] in earlier)
    created = [f for f in session.frames[record.first_frame:record.last_frame + 1] if f.kind == "create"]
    if not created:
        return "nothing created"
    node = created[0].tree.nodes[created[0].nodes[0]]
    return "none" if node.extra_key is None else node.extra_key


def _page_named(session: Session, block_hash: int) -> str:
    """The tokens of the page of the live tree whose block hash is ``block_hash``."""
    page = session.engine.page_size
    for node in session.engine.snapshot().root.walk():
        # only an engine with KV events sends the events this reads: its nodes carry page hashes
        for i, digest in enumerate(node.hash_value or ()):  # type: ignore[attr-defined]
            if hash_str_to_int64(digest) == block_hash:
                return edge_text(node.key[i * page:(i + 1) * page])
    return "a page no longer in the tree"
