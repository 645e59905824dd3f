"""Routers: which worker gets a request. Each answer comes with the reason, in words.

- ``round-robin``: the next worker in turn; ``random``: any worker, seeded;
- ``least-load``: the worker with the fewest requests in flight (the lowest index on a tie);
- ``cache-aware``: SGLang's router policy (``sgl-model-gateway/src/policies/cache_aware.rs``
  at 9fbe6800a; first #2114, 2024-11-23, thresholds #2170, 2024-11-25). When the loads are
  imbalanced (max - min > ``balance_abs_threshold`` and max > ``balance_rel_threshold`` x min)
  it sends the request to the least loaded worker; otherwise it asks its approximate tree
  (router_tree.py) how much of the prompt it has already sent somewhere: above
  ``cache_threshold`` of the prompt, to that worker; at or below it, to the least loaded
  one (HEAD, since #14650, 2025-12-09; before, to the worker whose tree was smallest:
  ``low_match="smallest-tree"``). Either way the prompt then goes into the tree under the
  chosen worker, and every ``eviction_interval`` passes the tree forgets the oldest leaves
  of every worker over ``max_tree_size`` tokens;
- ``cache-aware-events`` (radixviz's own: SGLang's gateway reads no KV events at 9fbe6800a;
  their wire format was fixed for NVIDIA Dynamo, #13488): the same decisions, but each
  worker's match is read off the pages that worker reported in its KV events (stored,
  removed, cleared): the request's pages are hashed the way the worker hashes them, and a
  worker matches as many leading pages as it holds. Exact where the tree guesses, but late:
  a page counts once the worker inserted it.

Defaults are the router's as SGLang launches it at 9fbe6800a (``sgl-model-gateway/src/main.rs``
and ``bindings/python/src/sglang_router/router_args.py``): threshold 0.3, abs 64, rel 1.5, a
tree of 2**26 characters per worker. The library's ``CacheAwareConfig::default()``
(``src/policies/mod.rs``) differs: 0.5, 32, 1.1 and 10,000; ``LIBRARY_DEFAULTS`` holds those.
The eviction interval is radixviz's, in passes (SGLang's is in seconds: 120 launched, 30 in
the library). No torch here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import random
from dataclasses import dataclass

from radixviz.cache.hashes import chain_hashes, hash_str_to_int64

from .router_tree import ApproxTree

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

LOW_MATCH = ("min-load", "smallest-tree")


@dataclass(frozen=True)
class RouterConfig:
    cache_threshold: float = 0.3
    balance_abs_threshold: int = 64
    balance_rel_threshold: float = 1.5
    max_tree_size: int = 2 ** 26    # tokens (characters) the approximate tree keeps per worker
    eviction_interval: int = 10     # passes between two evictions of the approximate tree
    low_match: str = "min-load"     # HEAD; "smallest-tree" as in #2114-#14650
    page_size: int = 1              # the workers' pages (the events router hashes by them)


LAUNCHED_DEFAULTS = RouterConfig()
# what a program gets from CacheAwareConfig::default() without the launcher's flags
LIBRARY_DEFAULTS = RouterConfig(cache_threshold=0.5, balance_abs_threshold=32,
                                balance_rel_threshold=1.1, max_tree_size=10_000)


@dataclass(frozen=True)
class Load:
    """One worker's load as the router sees it: requests and tokens routed there, not done."""
    requests: int
    tokens: int


@dataclass(frozen=True)
class RouteDecision:
    worker: int
    reason: str          # round-robin, random, least-load, cache, low-match, imbalanced
    text: str            # why, in a sentence
    matched: int = 0     # tokens the router believed the chosen worker holds
    length: int = 0      # tokens in the prompt


class Router:
    """Picks a worker for each request; ``observe`` hears a worker's KV events."""
    name = ""
    needs_events = False

    def __init__(self, workers: int, config: RouterConfig = RouterConfig(), seed: int = 0):
        if workers < 1:
            raise ValueError("a router needs at least one worker")
        self.workers, self.config = workers, config
        self.rng = random.Random(f"router:{seed}")
        self.next = 0

    def route(self, tokens: tuple, loads: list) -> RouteDecision:
        raise NotImplementedError

    def observe(self, worker: int, events: Iterable[Any]) -> None:
        """A worker's KV events since the last call (only routers that need them read them)."""

    def tick(self, now: int) -> None:
        """Once per pass, after the workers ran (the approximate tree's eviction clock)."""


class RoundRobin(Router):
    name = "round-robin"

    def route(self, tokens: tuple[int, ...], loads: Sequence[Load]) -> RouteDecision:
        worker, self.next = self.next, (self.next + 1) % self.workers
        return RouteDecision(worker, "round-robin", f"worker {worker}'s turn")


class RandomRouter(Router):
    name = "random"

    def route(self, tokens: tuple[int, ...], loads: Sequence[Load]) -> RouteDecision:
        worker = self.rng.randrange(self.workers)
        return RouteDecision(worker, "random", f"drawn at random: worker {worker}")


def least_loaded(loads: Sequence[Load]) -> int:
    """The worker with the fewest requests in flight; the lowest index on a tie (as Rust's
    ``min_by_key``, which keeps the first minimum)."""
    return min(range(len(loads)), key=lambda i: loads[i].requests)


class LeastLoad(Router):
    name = "least-load"

    def route(self, tokens: tuple[int, ...], loads: Sequence[Load]) -> RouteDecision:
        worker = least_loaded(loads)
        return RouteDecision(worker, "least-load", f"fewest requests in flight ({loads[worker].requests})")


class CacheAware(Router):
    """SGLang's cache-aware policy on an approximate tree of what it routed."""
    name = "cache-aware"

    def __init__(self, workers: int, config: RouterConfig = RouterConfig(), seed: int = 0):
        super().__init__(workers, config, seed)
        if config.low_match not in LOW_MATCH:
            raise ValueError(f"low_match must be {' or '.join(LOW_MATCH)}, not {config.low_match!r}")
        self.tree = ApproxTree()
        for worker in range(workers):
            self.tree.add_tenant(worker)
        self.forgotten = 0

    def route(self, tokens: tuple[int, ...], loads: Sequence[Load]) -> RouteDecision:
        decision = self.decide(tokens, loads)
        self.remember(tokens, decision.worker)
        return decision

    def decide(self, tokens: tuple[int, ...], loads: Sequence[Load]) -> RouteDecision:
        c = self.config
        counts = [load.requests for load in loads]
        low, high = min(counts), max(counts)
        if high - low > c.balance_abs_threshold and high > low * c.balance_rel_threshold:
            worker = least_loaded(loads)
            return RouteDecision(worker, "imbalanced", f"loads {low}–{high} apart by more than "
                            f"{c.balance_abs_threshold} and {c.balance_rel_threshold}×: the least "
                            f"loaded, worker {worker}", length=len(tokens))
        best, matched = self.best_match(tokens, loads)
        rate = matched / len(tokens) if tokens else 0.0
        if rate > c.cache_threshold:
            return RouteDecision(best, "cache", f"{matched}/{len(tokens)} tokens ({rate:.0%}) already "
                            f"sent to worker {best}, above {c.cache_threshold:.0%}", matched, len(tokens))
        worker = self.low_match_worker(loads)
        why = "the least loaded" if c.low_match == "min-load" else "the smallest tree"
        return RouteDecision(worker, "low-match", f"best match {matched}/{len(tokens)} ({rate:.0%}), not above "
                        f"{c.cache_threshold:.0%}: {why}, worker {worker}", 0, len(tokens))

    def best_match(self, tokens: tuple[int, ...], loads: Sequence[Load]) -> tuple:
        found = self.tree.prefix_match(tokens)
        return found.tenant, found.matched

    def low_match_worker(self, loads: Sequence[Load]) -> int:
        if self.config.low_match == "min-load":
            return least_loaded(loads)
        return min(range(self.workers), key=lambda w: self.tree.size.get(w, 0))

    def remember(self, tokens: tuple[int, ...], worker: int) -> None:
        self.tree.insert(tokens, worker)

    def tick(self, now: int) -> None:
        if now % self.config.eviction_interval == 0:
            self.forgotten += self.tree.evict_by_size(self.config.max_tree_size)

    def believed(self, tokens: tuple[int, ...]) -> dict:
        """Tokens of ``tokens`` the router believes each worker holds."""
        return self.tree.matched_per_tenant(tokens)


class CacheAwareEvents(CacheAware):
    """The same policy, each worker's match read off the pages its KV events reported."""
    name = "cache-aware-events"
    needs_events = True

    def __init__(self, workers: int, config: RouterConfig = RouterConfig(), seed: int = 0):
        super().__init__(workers, config, seed)
        self.held: list[set] = [set() for _ in range(workers)]   # block hashes each worker reported stored

    def observe(self, worker: int, events: Iterable[Any]) -> None:
        held = self.held[worker]
        for event in events:
            if event.kind == "stored":
                held.update(event.block_hashes)
            elif event.kind == "removed":
                held.difference_update(event.block_hashes)
            else:
                held.clear()

    def believed(self, tokens: tuple[int, ...]) -> dict:
        blocks = self._blocks(tokens)
        page = self.config.page_size
        out = {}
        for worker, held in enumerate(self.held):
            pages = 0
            for block in blocks:
                if block not in held:
                    break
                pages += 1
            out[worker] = pages * page
        return out

    def best_match(self, tokens: tuple[int, ...], loads: Sequence[Load]) -> tuple:
        believed = self.believed(tokens)
        # the longest match; among equals the less loaded, then the lower index
        best = min(range(self.workers), key=lambda w: (-believed[w], loads[w].requests, w))
        return best, believed[best]

    def low_match_worker(self, loads: Sequence[Load]) -> int:
        if self.config.low_match == "min-load":
            return least_loaded(loads)
        return min(range(self.workers), key=lambda w: len(self.held[w]))

    def remember(self, tokens: tuple[int, ...], worker: int) -> None:
        pass   # the worker's own events will say what it stored

    def tick(self, now: int) -> None:
        pass

    def _blocks(self, tokens: tuple[int, ...]) -> list:
        page = self.config.page_size
        whole = tokens[:len(tokens) - len(tokens) % page]
        return [hash_str_to_int64(h) for h in chain_hashes(whole, page)]


ROUTERS = {cls.name: cls for cls in (RoundRobin, RandomRouter, LeastLoad, CacheAware, CacheAwareEvents)}


def make_router(name: str, workers: int, config: RouterConfig = RouterConfig(), seed: int = 0) -> Router:
    """Router ``name`` for ``workers`` workers; ValueError names the routers there are."""
    if name not in ROUTERS:
        raise ValueError(f"unknown router {name!r}: choose from {', '.join(ROUTERS)}")
    return ROUTERS[name](workers, config, seed)
