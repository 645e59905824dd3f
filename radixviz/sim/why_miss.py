"""Why did request B not reuse request A's prompt? Every cause, with the tokens it cost.

The rules are SGLang v0.5.23's (2026-10-30; docs/why-miss.md names the lines). Each cause is
measured on what the causes before it left, so the costs add up to what B computed again:

- ``another_rank``: B went to another worker or data-parallel rank: A's KV is in another pool;
- ``namespace``: another adapter, ``extra_key`` or cache salt: namespaces never share nodes;
- ``differ``: the prompts part at some token (prompt_diff.py says where, in text, and why
  when it can: a date, an earlier turn's reasoning, the system prompt);
- ``not_inserted``: B was prefilled in the same batch as A, before A's prompt entered the
  tree (a prompt goes in when its prefill ends);
- ``last_token``: a request matches at most its length minus one token;
- ``logprob_start``: B asked for its prompt's logprobs from a token: the match stops there;
- ``page_floor``: with pages, only whole pages match;
- ``eviction``: the requests between needed room: which one, under which policy;
- ``host_only``: with a host tier, the rest of the match is on the host only and shorter than
  the load-back threshold (10 tokens), so it is computed again.

- ``sliding_window``, ``mamba_state`` (a hybrid model, ``hybrid=``: the unified engine): the
  match must end on a window of SWA KV since the last tombstone, and where a state was kept.

``explain`` replays A, the requests between and then looks B up on today's cache (the host
tier's with ``host_size``, the unified tree with ``hybrid``); without ``hybrid``,
``Explanation.not_checked`` says the hybrid causes were not.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from radixviz.cache.engines import engine_spec, option_owners
from radixviz.cache.keys import match
from radixviz.cache.write_policy import LOAD_BACK_THRESHOLD

from .why_miss_replay import Replay

PAGE_SIZES = (1, 4, 16, 64, 256)
NOT_CHECKED = ("a sliding window's cut (the window's tokens are recomputed) and a Mamba state "
               "missing at the match's end need the unified engine: not checked here")


@dataclass(frozen=True)
class Sent:
    """One request as the server got it: its tokens and what else decides its reuse."""
    tokens: tuple
    extra_key: str | None = None    # the request's own extra_key
    adapter: str | None = None      # its LoRA adapter (the server appends the adapter's id)
    salt: str | None = None         # its cache salt
    rank: int = 0                   # the worker or DP rank it went to
    logprob_start: int = -1         # input logprobs asked from this token (-1: none)

    def namespace(self) -> str | None:
        """The engine's extra key for this request: v0.5.23 keys a node by (extra_key with
        the adapter's id appended, cache salt), so no two different ones can meet."""
        if self.extra_key is None and self.adapter is None and self.salt is None:
            return None
        return repr(((self.extra_key or "") + (self.adapter or ""), self.salt))

    def limit(self) -> int:
        """The most of the prompt a match may take (v0.5.23's ``_compute_max_prefix_len``)."""
        cap = len(self.tokens) - 1
        if self.logprob_start >= 0:
            cap = min(cap, self.logprob_start)
        return max(cap, 0)


@dataclass
class Cause:
    kind: str          # another_rank, namespace, differ, not_inserted, last_token, logprob_start, page_floor,
    tokens_lost: int   # eviction, host_only, sliding_window, mamba_state: of B's tokens, how many this cost
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
    loaded_back: int = 0           # of ``reused``, tokens a host tier loads back
    not_checked: str = NOT_CHECKED
    parting: dict | None = None    # where the prompts part, in text, and why (prompt_diff.py)

    def kinds(self) -> list:
        return [c.kind for c in self.causes]

    def to_dict(self) -> dict:
        return {"a_tokens": len(self.a), "b_tokens": len(self.b), "common_prefix": self.common,
                "reused": self.reused, "computed": len(self.b) - self.reused, "loaded_back": self.loaded_back,
                "causes": [vars(c) for c in self.causes], "not_checked": self.not_checked,
                "parting": self.parting,
                "page_floors": {str(k): v for k, v in self.page_floors.items()}, "settings": self.settings}


def page_floor(shared: int, length: int, page: int, limit: int | None = None) -> int:
    """Tokens reused of a prompt of ``length`` sharing ``shared`` with the cache, at ``page``
    tokens a page: never more than ``limit`` (the length minus one), then whole pages only."""
    usable = min(shared, length - 1 if limit is None else limit)
    return usable - usable % page


def _shown(token) -> str:
    """A token id, with its character when it is printable ASCII (text prompts are bytes)."""
    return f"{token} ({chr(token)!r})" if isinstance(token, int) and 32 <= token < 127 else repr(token)


def _namespace_words(a: Sent, b: Sent) -> str:
    parts = [(name, x, y) for name, x, y in (("adapter", a.adapter, b.adapter), ("extra_key", a.extra_key,
             b.extra_key), ("cache salt", a.salt, b.salt)) if x != y]
    def given(value) -> str:
        return "none" if value is None else repr(value)
    return "; ".join(f"{name} {given(x)} for A, {given(y)} for B" for name, x, y in parts)


def explain(a, b, *, page_size: int = 1, namespace_a=None, namespace_b=None, between=(),
            pool_size: int | None = None, eviction: str = "lru", host_size: int | None = None,
            same_batch: bool = False, hybrid: dict | None = None) -> Explanation:
    """Why ``b`` reuses less than it shares with ``a``. Each is a token tuple or a ``Sent``
    (``namespace_a``/``namespace_b``: a tuple's extra key); ``between`` lists ``(tokens,
    extra key)`` of the requests sent in between; ``same_batch``: B was prefilled with A;
    ``hybrid``: a hybrid model's options (the unified engine's ``components``, ``window``,
    ``mamba_chunk``, pools), whose sliding window and Mamba states are then causes too."""
    a = a if isinstance(a, Sent) else Sent(tuple(a), extra_key=namespace_a)
    b = b if isinstance(b, Sent) else Sent(tuple(b), extra_key=namespace_b)
    if not a.tokens or not b.tokens:
        raise ValueError("both prompts need at least one token")
    if host_size is not None and host_size <= 0:
        raise ValueError("the host tier needs a host size above 0")
    if host_size is not None and hybrid is not None:
        raise ValueError("the host tier and a hybrid model's components are not replayed together")
    sizes = [len(a.tokens), len(b.tokens), *(len(t) for t, _ in between)]
    roomy = sum(sizes) + 2 * page_size + 16
    pool_size = pool_size or roomy
    common = match(a.tokens, b.tokens)   # the tree's own comparison: the common prefix of two keys
    out = Explanation(a.tokens, b.tokens, common, 0, settings={
        "page_size": page_size, "pool_size": pool_size, "eviction_policy": eviction, "host_size": host_size,
        "namespace_a": a.namespace(), "namespace_b": b.namespace(), "rank_a": a.rank, "rank_b": b.rank,
        "logprob_start_b": b.logprob_start, "same_batch": same_batch, "between": len(between),
        **({"hybrid": {k: list(v) if isinstance(v, tuple) else v for k, v in hybrid.items()}} if hybrid else {})})
    if hybrid is not None:
        out.not_checked = ""
    apart = a.rank != b.rank or a.namespace() != b.namespace()
    shareable = 0 if apart else common
    out.page_floors = {p: page_floor(shareable, len(b.tokens), p, b.limit())
                       for p in sorted({*PAGE_SIZES, page_size})}
    _static_causes(out, a, b, common, page_size)
    reused = out.page_floors[page_size]
    if reused and same_batch:
        out.causes.append(Cause("not_inserted", reused, f"B was prefilled in the same batch as A: A's "
                                f"prompt enters the tree when its prefill ends, so the {reused} tokens "
                                "B could have reused were computed by both"))
        reused = 0
    if reused:
        reused = _replayed(out, a, b, between, reused, pool_size, roomy, page_size, eviction, host_size, hybrid)
    out.reused = reused
    return out


def _static_causes(out: Explanation, a: Sent, b: Sent, common: int, page: int) -> None:
    """The causes that need no replay, each with its cost."""
    if a.rank != b.rank:
        out.causes.append(Cause("another_rank", common, f"A ran on worker (or DP rank) {a.rank} and B on "
                                f"{b.rank}: each keeps its own cache, so the {common} shared tokens are "
                                "computed again"))
        return
    if a.namespace() != b.namespace():
        out.causes.append(Cause("namespace", common, f"{_namespace_words(a, b)}: namespaces never share "
                                f"nodes, so the {common} tokens they have in common are computed again"))
        return
    n = len(b.tokens)
    if common < min(len(a.tokens), n):
        out.causes.append(Cause("differ", n - common, f"the prompts part at token {common}: A has "
                                f"{_shown(a.tokens[common])}, B has {_shown(b.tokens[common])}; nothing "
                                "after it can be shared"))
    if common >= n:
        # B is all in A's prompt; whether it is still all in the cache is an eviction's to say
        out.causes.append(Cause("last_token", 1, f"B's {n} tokens are all in A, but a request matches "
                                "at most its length minus one: its last token is computed anyway, to give "
                                "the logits of the first new one"))
    capped = min(common, n - 1)
    if b.logprob_start >= 0 and b.logprob_start < capped:
        out.causes.append(Cause("logprob_start", capped - b.logprob_start, f"B asked for its prompt's logprobs "
                                f"from token {b.logprob_start}: the match stops there, and the "
                                f"{capped - b.logprob_start} tokens after it are computed to give them"))
    whole = min(capped, b.limit())
    floored = whole - whole % page
    if floored < whole:
        out.causes.append(Cause("page_floor", whole - floored, f"pages of {page} tokens: only whole pages "
                                f"match, so {whole - floored} shared token(s) past the last whole page "
                                f"({floored}) are computed again"))


def _replay(pool_size: int, page: int, eviction: str, host_size: int | None, hybrid: dict | None) -> Replay:
    """Today's cache (the host tier's with ``host_size``), or the engine of a hybrid model's
    components (the registry's engine that takes them) with ``hybrid``'s options."""
    if hybrid is None:
        return Replay(pool_size, page, eviction, host_size)
    spec = engine_spec(option_owners("components")[0])
    made: Replay = spec.part("sim").replay_class()(pool_size, page, eviction, hybrid)  # type: ignore[union-attr]
    return made


def _replayed(out: Explanation, a: Sent, b: Sent, between, ideal: int, pool_size: int, roomy: int,
              page: int, eviction: str, host_size: int | None, hybrid: dict | None = None) -> int:
    """Replay the requests on the given pool and on one that never evicts; add the eviction,
    host and hybrid model's causes; return what B reuses."""
    tight = _replay(pool_size, page, eviction, host_size, hybrid)
    tight.run(a.tokens, a.namespace())
    space = b.namespace()
    culprit, lost_at = None, 0
    for index, (tokens, namespace) in enumerate(between):
        before = tight.device_reach(b.tokens, b.limit(), space)
        evicted = tight.run(tuple(tokens), namespace)
        after = tight.device_reach(b.tokens, b.limit(), space)
        if after < before and culprit is None:
            culprit, lost_at = (index, evicted), before - after
    reach = tight.reach(b.tokens, b.limit(), space)
    loaded = reach.host if reach.host >= LOAD_BACK_THRESHOLD else 0
    reused = min(reach.device + loaded, ideal)
    out.loaded_back = max(0, reused - reach.device)
    full = reach.device if reach.full is None else reach.full   # what an eviction left of B's prefix
    lost = ideal - full - reach.host
    if lost > 0:
        index, evicted = culprit if culprit is not None else (-1, 0)
        who = f"request {index + 1} of the {len(between)} in between" if index >= 0 else "a request in between"
        tiers = "both tiers" if host_size is not None else f"a {pool_size}-slot pool"
        out.causes.append(Cause("eviction", lost, f"{who} needed room: {eviction} eviction freed {evicted} "
                                f"tokens of {tiers}, {lost_at or lost} of them B would have reused"))
    out.causes.extend(Cause(kind, tokens, message) for kind, tokens, message in reach.causes)
    if reach.host and not loaded:
        out.causes.append(Cause("host_only", reach.host, f"{reach.host} tokens after the device's {reach.device} "
                                f"are on the host only, fewer than the {LOAD_BACK_THRESHOLD} a load back "
                                "needs: they are computed again"))
    return reused
