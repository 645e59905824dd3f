"""Scheduling policies: in which order the waiting requests are offered a place.

Each policy takes ``(queue, cache, rng)`` after every request in ``queue`` has been matched
(``prefix_indices`` and ``last_node`` are fresh) and returns a new list. They live in a
table, not an if/elif chain, so adding one is adding a row.
"""
from __future__ import annotations

import random
from collections import defaultdict
from typing import Callable


def longest_prefix_match(queue, cache, rng):
    """Longest cached prefix first; ties keep arrival order (Python's sort is stable)."""
    return sorted(queue, key=lambda r: -r.prefix_len)


def first_come_first_served(queue, cache, rng):
    return list(queue)


def shuffled(queue, cache, rng):
    order = list(queue)
    rng.shuffle(order)
    return order


def subtree_weight(queue, cache, rng):
    """Depth first through the tree, heaviest subtree first, a node's own requests last.

    A node weighs 1 for itself, plus the requests whose match ended on it, plus its
    children's weights, as the release counted it. Keeping a subtree's requests together
    lets a shared prefix leave the cache as soon as possible after its last user.
    """
    waiting_at = defaultdict(list)  # last_node -> requests whose match ended there
    for req in queue:
        waiting_at[req.last_node].append(req)
    for reqs in waiting_at.values():
        reqs.sort(key=lambda r: -r.prefix_len)

    weight = _weights(cache.root_node, waiting_at)
    order = []
    # explicit stack of (node, children expanded?): the tree can be deeper than recursion allows
    stack = [(cache.root_node, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.extend(waiting_at.get(node, ()))
            continue
        stack.append((node, True))
        heaviest_first = sorted(node.children.values(), key=lambda c: -weight[c])
        stack.extend((child, False) for child in reversed(heaviest_first))
    if len(order) != len(queue):
        raise RuntimeError("weight order lost a request: a last_node is no longer in the tree")
    return order


def _weights(root, waiting_at) -> dict:
    weight = {}
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


# name -> (order function, new-token estimation ratio)
# fcfs is less likely to reuse the cache, so it reserves more room for the running batch
POLICIES: dict[str, tuple[Callable, float]] = {
    "lpm": (longest_prefix_match, 0.4),
    "fcfs": (first_come_first_served, 0.5),
    "random": (shuffled, 0.4),
    "weight": (subtree_weight, 0.4),
}


def get_policy(name: str) -> tuple[Callable, float]:
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}: choose from {', '.join(POLICIES)}")
    return POLICIES[name]


def order_queue(name: str, queue, cache, rng: random.Random) -> list:
    """``queue`` in the order policy ``name`` offers places."""
    return get_policy(name)[0](queue, cache, rng)
