"""Why did request B not reuse request A's prompt? Every cause, measured on today's cache.

The five causes a person meets (and asks SGLang's and vLLM's trackers about):

- ``differ``: the prompts part at some token: only the tokens before it can be shared;
- ``last_token``: B is cached whole, but its last token is computed anyway, because the
  scheduler needs that token's output to sample the first new one;
- ``page_floor``: with pages, only whole pages match: the shared tokens past the last whole
  page are computed again (shown for several page sizes);
- ``namespace``: A and B were sent with different extra keys (a LoRA adapter, a cache
  salt): namespaces never share nodes;
- ``eviction``: the requests sent between them filled the pool, and evicting made room by
  dropping part of what A left (which request, under which eviction policy).

``explain`` replays A, the requests between, then looks B up (``preview``: nothing is
touched), on the 2026 engine of radixviz.cache with the page size, pool and eviction
policy given, one request at a time, each inserted when it finishes as the loop does.
It returns plain data; commands/why_miss.py draws it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from radixviz.cache import TokenToKVPool
from radixviz.cache.engines import engine_with, open_engine
from radixviz.cache.keys import match

PAGE_SIZES = (1, 4, 16, 64, 256)


@dataclass
class Cause:
    kind: str          # differ, last_token, page_floor, namespace, eviction
    tokens_lost: int   # of B's shareable tokens, how many this cause cost
    message: str


@dataclass
class Explanation:
    a: tuple
    b: tuple
    common: int                    # tokens A and B share from the start
    reused: int                    # tokens B would take from the cache
    causes: list = field(default_factory=list)
    page_floors: dict = field(default_factory=dict)   # page size -> tokens reused at that size
    settings: dict = field(default_factory=dict)

    def kinds(self) -> list:
        return [c.kind for c in self.causes]

    def to_dict(self) -> dict:
        return {"a_tokens": len(self.a), "b_tokens": len(self.b), "common_prefix": self.common,
                "reused": self.reused, "computed": len(self.b) - self.reused,
                "causes": [vars(c) for c in self.causes],
                "page_floors": {str(k): v for k, v in self.page_floors.items()}, "settings": self.settings}


def page_floor(shared: int, length: int, page: int) -> int:
    """Tokens reused of a prompt of ``length`` sharing ``shared`` with the cache, at ``page``
    tokens a page: whole pages only, and never the whole prompt (the last-token rule)."""
    usable = min(shared, length - length % page, length - 1)
    return usable - usable % page


class _Replay:
    """One request at a time on the engine: match, allocate (evicting if needed), insert."""

    def __init__(self, pool_size: int, page_size: int, eviction: str):
        self.pool = TokenToKVPool(pool_size, device="cpu")
        self.engine = open_engine(engine_with("pages", without="host_tier"), self.pool, page_size=page_size,
                                  eviction_policy=eviction)

    def reusable(self, prompt, namespace) -> int:
        key = prompt[:self.engine.whole_pages(len(prompt))]
        preview = self.engine.preview(key, namespace) if namespace is not None else self.engine.preview(key)
        return preview.matched

    def run(self, prompt, namespace) -> int:
        """Send one request; return the tokens evicted to make room for it."""
        engine, key = self.engine, prompt[:self.engine.whole_pages(len(prompt))]
        prefix, node = engine.match(key, namespace) if namespace is not None else engine.match(key)
        engine.lock(node)
        self.pool.add_refs(prefix)
        need = len(prompt) - prefix.shape[0]
        slots, evicted = self.pool.alloc(need), 0
        if slots is None:
            evicted = engine.evict(need)
            slots = self.pool.alloc(need)
        if slots is None:
            raise ValueError(f"a request of {len(prompt)} tokens does not fit a pool of "
                             f"{self.pool.size} slots: give a larger --pool-size")
        values = torch.cat([prefix, slots]) if need else prefix
        engine.insert(tuple(prompt), values, extra_key=namespace)
        engine.unlock(node)
        return evicted


def explain(a, b, *, page_size: int = 1, namespace_a=None, namespace_b=None, between=(),
            pool_size: int | None = None, eviction: str = "lru") -> Explanation:
    """Why ``b`` (token ids) reuses less than ``a`` shares with it; ``between`` lists
    ``(tokens, namespace)`` of the requests sent in between."""
    a, b = tuple(a), tuple(b)
    if not a or not b:
        raise ValueError("both prompts need at least one token")
    sizes = [len(a), len(b), *(len(t) for t, _ in between)]
    roomy = sum(sizes) + 2 * page_size + 16
    pool_size = pool_size or roomy
    common = match(a, b)   # the tree's own comparison: the common prefix of two keys
    same_space = namespace_a == namespace_b
    shareable = common if same_space else 0
    out = Explanation(a, b, common, 0, settings={
        "page_size": page_size, "pool_size": pool_size, "eviction_policy": eviction,
        "namespace_a": namespace_a, "namespace_b": namespace_b, "between": len(between)})
    out.page_floors = {p: page_floor(shareable, len(b), p) for p in sorted({*PAGE_SIZES, page_size})}

    if not same_space:
        out.causes.append(Cause("namespace", common, f"A was sent in namespace {namespace_a!r} and B in "
                                f"{namespace_b!r}: namespaces never share nodes, so the {common} tokens "
                                "they have in common are computed again"))
    if common < min(len(a), len(b)):
        out.causes.append(Cause("differ", len(b) - common, f"the prompts part at token {common}: A has "
                                f"{a[common]!r}, B has {b[common]!r}; nothing after it can be shared"))
    elif common == len(b) and same_space:
        out.causes.append(Cause("last_token", 1, f"B ({len(b)} tokens) is all in the cache, but its last "
                                "token is computed anyway: the scheduler needs that token's output "
                                "to sample the first new one"))
    whole = page_floor(shareable, len(b), 1)
    floored = out.page_floors[page_size]
    if floored < whole:
        out.causes.append(Cause("page_floor", whole - floored, f"pages of {page_size} tokens: only whole "
                                f"pages match, so {whole - floored} shared token(s) past the last whole "
                                f"page ({floored}) are computed again"))

    # the same requests on the given pool, and on one that never evicts, side by side
    tight, ideal = _Replay(pool_size, page_size, eviction), _Replay(roomy, page_size, eviction)
    for replay in (tight, ideal):
        replay.run(a, namespace_a)
    culprit, lost_at = None, 0
    for index, (tokens, namespace) in enumerate(between):
        before = tight.reusable(b, namespace_b)
        evicted = tight.run(tuple(tokens), namespace)
        ideal.run(tuple(tokens), namespace)
        after = tight.reusable(b, namespace_b)
        if after < before and culprit is None:
            culprit, lost_at = (index, evicted), before - after
    reused_tight = min(tight.reusable(b, namespace_b), len(b) - 1)
    reused_ideal = min(ideal.reusable(b, namespace_b), len(b) - 1)
    if reused_tight < reused_ideal:
        index, evicted = culprit if culprit is not None else (-1, 0)
        who = f"request {index + 1} of the {len(between)} in between" if index >= 0 else "a request in between"
        out.causes.append(Cause("eviction", reused_ideal - reused_tight, f"{who} needed room: {eviction} "
                                f"eviction freed {evicted} tokens of a {pool_size}-slot pool, {lost_at} of "
                                f"them B would have reused"))
    out.reused = reused_tight
    return out
