"""Seeded workloads by name: each returns ``n`` RequestSpecs of token ids in range(256).

The same (name, n, seed) always gives the same requests, so policies can be compared on
exactly the same traffic. Chats count each turn as one request.
"""
from __future__ import annotations

import random
from typing import Protocol, runtime_checkable
from collections.abc import Callable, Iterator

from .model_api import VOCAB_SIZE
from .request import RequestSpec


def _tokens(rng: random.Random, low: int, high: int) -> tuple:
    return tuple(rng.randrange(VOCAB_SIZE) for _ in range(rng.randint(low, high)))


def shared_prompt(n: int, rng: random.Random) -> list:
    """One long system prompt in front of every question."""
    system = _tokens(rng, 256, 256)
    return [RequestSpec(system + _tokens(rng, 16, 64), rng.randint(8, 32)) for _ in range(n)]


def few_shot(n: int, rng: random.Random) -> list:
    """Six sets of worked examples; questions for the sets arrive interleaved."""
    sets = [_tokens(rng, 160, 240) for _ in range(6)]
    return [RequestSpec(rng.choice(sets) + _tokens(rng, 16, 48), rng.randint(4, 16))
            for _ in range(n)]


def multi_turn(n: int, rng: random.Random, turns: int = 4) -> list:
    """Chats of up to four turns; each later turn comes back with the whole history."""
    specs = []
    while n > 0:
        k = min(turns, n)
        later = tuple((_tokens(rng, 16, 48), rng.randint(16, 48)) for _ in range(k - 1))
        specs.append(RequestSpec(_tokens(rng, 64, 128), rng.randint(16, 48), later))
        n -= k
    return specs


def tree_of_thought(n: int, rng: random.Random, branching: int = 3, depth: int = 3) -> list:
    """One stem and a tree of thoughts under it; each request continues one path."""
    stem = _tokens(rng, 128, 128)
    thoughts: dict = {}  # path of branch choices -> that thought's tokens

    def thought(path: tuple) -> tuple:
        if path not in thoughts:
            thoughts[path] = _tokens(rng, 16, 32)
        return thoughts[path]

    specs = []
    for _ in range(n):
        path = tuple(rng.randrange(branching) for _ in range(rng.randint(1, depth)))
        body = sum((thought(path[:i + 1]) for i in range(len(path))), ())
        specs.append(RequestSpec(stem + body, rng.randint(8, 24)))
    return specs


def no_sharing(n: int, rng: random.Random) -> list:
    """Unrelated prompts: the cache can only cost, never help."""
    return [RequestSpec(_tokens(rng, 64, 256), rng.randint(8, 32)) for _ in range(n)]


def priority_mix(n: int, rng: random.Random, users: int = 8, share: float = 0.2) -> list:
    """Eight users, each sending one request after another (the next when the answer is
    back): mostly one-off prompts at priority 0, and now and then (one in five) a question
    behind a long system prompt at priority 1. Between two uses the one-offs push the
    system prompt toward eviction; the ``priority`` policy of today's cache keeps it."""
    system = _tokens(rng, 256, 256)
    lines: list = [[] for _ in range(min(users, n))]
    for i in range(n):
        if rng.random() < share:
            spec = RequestSpec(system + _tokens(rng, 16, 48), rng.randint(8, 24), priority=1)
        else:
            spec = RequestSpec(_tokens(rng, 128, 256), rng.randint(8, 24))
        lines[i % len(lines)].append(spec)
    firsts = []
    for line in lines:
        chain: RequestSpec | None = None
        for later in reversed(line):
            chain = RequestSpec(later.input_ids, later.max_new_tokens, then=chain, priority=later.priority)
        firsts.append(chain)
    return firsts


def multi_tenant(n: int, rng: random.Random, tenants: int = 8) -> list:
    """Eight tenants, each with its own long system prompt; their questions arrive mixed.
    One worker's pool cannot keep every tenant's prompt: routing decides who hits."""
    systems = [_tokens(rng, 160, 224) for _ in range(tenants)]
    return [RequestSpec(rng.choice(systems) + _tokens(rng, 16, 48), rng.randint(8, 24))
            for _ in range(n)]


def hot_prefix(n: int, rng: random.Random, hot_share: float = 0.75, cold: int = 6) -> list:
    """One hot system prompt behind three requests in four, six cold ones behind the rest:
    a router that followed the cache alone would send the hot ones all to one worker."""
    hot = _tokens(rng, 256, 256)
    colds = [_tokens(rng, 160, 224) for _ in range(cold)]
    return [RequestSpec((hot if rng.random() < hot_share else rng.choice(colds)) + _tokens(rng, 16, 48),
                        rng.randint(8, 24)) for _ in range(n)]


WORKLOADS: dict[str, Callable[[int, random.Random], list]] = {
    "shared-prompt": shared_prompt,
    "few-shot": few_shot,
    "multi-turn": multi_turn,
    "tree-of-thought": tree_of_thought,
    "no-sharing": no_sharing,
    "priority-mix": priority_mix,
    "multi-tenant": multi_tenant,
    "hot-prefix": hot_prefix,
}


def make_workload(name: str | None, n: int, seed: int = 0) -> list:
    """The RequestSpecs of workload ``name``; ValueError names the choices on a bad name
    (None too: a caller given neither requests nor a workload's name)."""
    if name is None or name not in WORKLOADS:
        raise ValueError(f"unknown workload {name!r}: choose from {', '.join(WORKLOADS)}")
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"the number of requests must be a positive integer, not {n!r}")
    return WORKLOADS[name](n, random.Random(f"{name}:{seed}"))


@runtime_checkable
class StreamedWorkload(Protocol):
    """Requests handed over as they arrive instead of a list held whole: a trace streamed
    from its file (sim/traces StreamedTrace), or a test's own timed pairs."""

    def arrivals(self) -> Iterator:
        """A fresh one-pass iterator of ``(arrival_pass or None, RequestSpec)``, by arrival."""


@runtime_checkable
class CountsItself(Protocol):
    """A workload that counts its requests without reading them (StreamedTrace: its lines)."""

    def request_count(self) -> int:
        """The number of requests."""


def request_count(specs) -> int:
    """Requests including the chat turns and session requests that arrive later."""
    if isinstance(specs, CountsItself):   # a streamed trace counts its lines, unparsed
        return specs.request_count()
    total = 0
    for spec in specs:
        while spec is not None:
            total += 1 + len(spec.follow_ups)
            spec = spec.then
    return total
