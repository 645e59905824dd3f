"""A why-miss question on the unified tree (``why-miss --window N`` / ``--mamba-chunk N``):
the requests replayed as v0.5.23's request layer sends them (sim.py), then B's match judged
per component, so the sliding window's cut and the missing Mamba state each say what they
cost (sim/why_miss.py adds them to the other causes).

A request here is its prompt, prefilled and cached: its SWA KV stays whole (a prompt is
cached after its prefill, before it decodes), its state is kept at the last checkpoint-grid
point of what it computed, or at the branching point its match reported when it passes it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, cast


from radixviz.cache import TokenToKVPool
from radixviz.cache.engines import engine_spec
from radixviz.sim.why_miss_replay import Reach, Replay

from .cache_verdicts import judge, reach
from .preview import walk

if TYPE_CHECKING:
    from .engine import Engine as UnifiedEngine
    from .node import UnifiedTreeNode


class HybridReplay(Replay):
    """``Replay`` (sim/why_miss_replay.py) on the unified engine with ``options``."""

    def __init__(self, pool_size: int, page_size: int, eviction: str, options: dict) -> None:
        pool = TokenToKVPool(pool_size, device="cpu")
        engine = engine_spec("unified").open(pool, page_size=page_size, eviction_policy=eviction, **options)
        self.engine = engine
        self.pool = engine.pool   # SGLang's allocator (engine.py)
        self.unified = cast("UnifiedEngine", engine)

    def device_reach(self, prompt: tuple, limit: int, namespace) -> int:
        """How far the Full KV alone holds ``prompt``: what an eviction can take."""
        steps, _, _ = walk(self.unified.cache.snapshot(), self.key(prompt, limit))
        return sum(s.tokens for s in steps)

    def reach(self, prompt: tuple, limit: int, namespace) -> Reach:
        tree = self.unified.cache.snapshot()
        steps, _, _ = walk(tree, self.key(prompt, limit))
        window = tree.sliding_window_size
        judged = judge(steps, window)
        full, every = sum(s.tokens for s in steps), reach(judged)
        swa = reach(judged, "swa") if "swa" in tree.settings["components"] else full
        causes = []
        if full > swa:
            gone = [v.end for v, s in zip(judged, steps) if s.swa is False]
            where = f"tokens up to {gone[-1]} lost theirs (an SWA tombstone)" if gone else "the tree holds too few"
            causes.append(("sliding_window", full - swa,
                           f"a sliding-window layer reads the last {window} tokens, so a match must end on "
                           f"{window} tokens of SWA KV since the last tombstone: {where}, and the match stops "
                           f"at token {swa}: {full - swa} shared tokens are computed again"))
        if swa > every:
            kept = [v.end for v, s in zip(judged, steps) if s.state]
            at = ", ".join(map(str, kept)) if kept else "none on its path"
            chunk = tree.mamba_cache_chunk_size or 1
            branch = full // chunk * chunk
            causes.append(("mamba_state", swa - every,
                           f"a linear-attention layer's state sums every token before it, so a match must end "
                           f"where a state was kept (on B's path: {at}); it stops at token {every}, and "
                           f"{swa - every} shared tokens are computed again. B keeps a state at its branching "
                           f"point (token {branch}, on the {chunk}-token grid), so the next such request "
                           "reuses more"))
        return Reach(every, 0, full=full, causes=tuple(causes))

    def run(self, prompt: tuple, namespace) -> int:
        """Send one request: match, lock, compute the rest, cache it up to its tracked state."""
        engine = self.unified
        key = prompt[:engine.whole_pages(len(prompt))]
        prefix, matched = engine.match(key)
        node = cast("UnifiedTreeNode", matched)
        branch = engine.last_match.mamba_branching_seqlen if engine.last_match is not None else None
        engine.lock(node)
        self.pool.add_refs(prefix)
        values, evicted = self.take_slots(prompt, key, prefix)
        end = engine.tracked_state_end(len(prefix), len(key), branch) if engine.cache.mamba_enabled else len(key)
        engine.give_back_state(node)
        engine.insert(key[:end], values[:end])
        if end < len(key):
            self.pool.free(values[end:])
        engine.unlock(node)
        return evicted
