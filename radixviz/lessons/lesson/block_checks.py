"""Prediction checks that need more than one field of one result.

- ``split_edges``: the edge of each new upper node that the block's first operation cut
  off, in order ("which node does the split create?");
- ``first_offered.POLICY`` / ``last_offered.POLICY``: the block's ``match`` operations
  stand for the waiting queue, in arrival order; the key of the request the scheduling
  policy offers a place first (or last). POLICY is ``lpm``, ``fcfs`` or ``weight``, or
  ``lpm-2442`` / ``weight-2442`` with #2442's in-batch rule, computed by the simulation's
  own policy code (``radixviz.sim.policies``).
"""
from __future__ import annotations

import random
from types import SimpleNamespace

from radixviz.sim.policies import IN_BATCH_THRESHOLD, order_queue

from ..scenario import edge_text

_POLICIES = ("lpm", "fcfs", "weight", "lpm-2442", "weight-2442")
NAMES = ("split_edges", *(f"{end}_offered.{p}" for end in ("first", "last") for p in _POLICIES))


def block_value(check: str, records, session):
    """What the engine says for a block check; KeyError when ``check`` is not one."""
    if check == "split_edges":
        frames = session.frames[records[0].first_frame:records[0].last_frame + 1]
        return [edge_text(f.tree.nodes[f.nodes[0]].key) for f in frames if f.kind == "split"]
    end, _, policy = check.partition("_offered.")
    if end not in ("first", "last") or policy not in _POLICIES:
        raise KeyError(check)
    order = offered_order(policy, records, session)
    return order[0] if end == "first" else order[-1]


def offered_order(policy: str, records, session) -> list[str]:
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
