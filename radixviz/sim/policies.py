"""Scheduling policies: in which order the waiting requests are offered a place.

Each policy takes ``(queue, cache, rng, last=())`` after every request in ``queue`` has
been matched (``prefix_indices`` and ``last_node`` are fresh) and returns a new list.
``last`` is what #2442's in-batch rule (``in_batch_deprioritized``) sorts to the back;
fcfs and random never receive any, as in SGLang. They live in a table, not an if/elif
chain, so adding one is adding a row.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable

# SGLang's IN_BATCH_PREFIX_CACHING_THRESHOLD (#2442, env SGLANG_IN_BATCH_PREFIX_CACHING_THRESHOLD)
IN_BATCH_THRESHOLD = 32


def longest_prefix_match(queue, cache, rng, last=()):
    """Longest cached prefix first. The sort is stable and the scheduler keeps the sorted
    queue between rounds, so ties keep the order they had after the previous round (arrival
    order only the first time). ``last`` goes to the back, in queue order (#2442's infinity)."""
    if not last:
        return sorted(queue, key=lambda r: -r.prefix_len)
    back = set(map(id, last))
    return sorted(queue, key=lambda r: float("inf") if id(r) in back else -r.prefix_len)


def first_come_first_served(queue, cache, rng, last=()):
    """The queue as it stands."""
    return list(queue)


def shuffled(queue, cache, rng, last=()):
    order = list(queue)
    rng.shuffle(order)
    return order


def subtree_weight(queue, cache, rng, last=()):
    """Depth first through the tree, heaviest subtree first, a node's own requests last.

    A node weighs 1 for itself, plus the requests whose match ended on it, plus its
    children's weights, as the release counted it. Keeping a subtree's requests together
    lets a shared prefix leave the cache as soon as possible after its last user.
    Requests in ``last`` still weigh on their node but are skipped by the walk and
    appended after it, in the order #2442 found them.
    """
    waiting_at = defaultdict(list)  # last_node -> requests whose match ended there
    for req in queue:
        waiting_at[req.last_node].append(req)
    for reqs in waiting_at.values():
        reqs.sort(key=lambda r: -r.prefix_len)

    weight = _weights(cache.root_node, waiting_at)
    back = set(map(id, last))
    order: list = []
    # explicit stack of (node, children expanded?): the tree can be deeper than recursion allows
    stack = [(cache.root_node, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.extend(r for r in waiting_at.get(node, ()) if id(r) not in back)
            continue
        stack.append((node, True))
        heaviest_first = sorted(node.children.values(), key=lambda c: -weight[c])
        stack.extend((child, False) for child in reversed(heaviest_first))
    order.extend(last)
    if len(order) != len(queue):
        raise RuntimeError("weight order lost a request: a last_node is no longer in the tree")
    return order


def _weights(root, waiting_at) -> dict:
    weight: dict = {}
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            weight[node] = 1 + len(waiting_at.get(node, ())) + sum(
                weight[c] for c in node.children.values())
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in node.children.values())
    return weight


def in_batch_deprioritized(queue, threshold: int = IN_BATCH_THRESHOLD) -> list:
    """#2442's rule: the requests of ``queue`` to sort last this round, in queue order.

    A scratch radix tree is built from the waiting queue alone, in queue order. A request
    whose match in the real tree is at most ``threshold`` tokens is matched against that
    scratch tree: if it shares at least ``threshold`` tokens with a request earlier in the
    queue it is picked; otherwise its prompt goes into the scratch tree. Requests with a
    longer real hit are neither picked nor added. Running requests are never looked at,
    and a picked request is only reordered: admission still takes it if room remains.
    """
    from radixviz.cache import RadixCache  # torch: the CLI imports this module for POLICIES

    scratch = RadixCache()
    picked = []
    for req in queue:
        if req.prefix_len > threshold:
            continue
        shared, _ = scratch.match_prefix(req.input_ids)
        if shared.shape[0] >= threshold:
            picked.append(req)
        else:
            scratch.insert(req.input_ids)   # the value is the token ids, as in #2442
    return picked


# name -> (order function, new-token estimation ratio)
# fcfs is less likely to reuse the cache, so it reserves more room for the running batch
POLICIES: dict[str, tuple[Callable, float]] = {
    "lpm": (longest_prefix_match, 0.4),
    "fcfs": (first_come_first_served, 0.5),
    "random": (shuffled, 0.4),
    "weight": (subtree_weight, 0.4),
}
# the policies #2442 applies its rule to (SGLang: lpm and dfs-weight)
IN_BATCH_POLICIES = ("lpm", "weight")


def get_policy(name: str) -> tuple[Callable, float]:
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}: choose from {', '.join(POLICIES)}")
    return POLICIES[name]


def order_queue(name: str, queue, cache, rng: random.Random, in_batch_threshold: int | None = None) -> list:
    """``queue`` in the order policy ``name`` offers places; with ``in_batch_threshold``,
    #2442's rule first picks the requests to sort last (lpm and weight only)."""
    last: tuple | list = ()
    if in_batch_threshold is not None and name in IN_BATCH_POLICIES:
        last = in_batch_deprioritized(queue, in_batch_threshold)
    return get_policy(name)[0](queue, cache, rng, last)
