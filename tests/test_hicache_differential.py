"""The host-tier engine against the reference written from SGLang's file, step by step.

For each write policy, page sizes 1 and 4, every eviction policy and two host sizes (SGLang's
default, twice the device pool, and the smallest it allows, one page more than the device),
a seeded run of random operations: inserts with priorities, matches, locks and unlocks,
evictions of both tiers, loads back, the scheduler's check and ``sync``. Keys are built from
three pages that share leading tokens, so edges split inside pages and on either tier.
After every step the engine and the reference must agree on each result and on the whole
tree (device and host slots, locks, host locks, hit counts, priorities, both clock times),
the free slots of both pools (the host's in queue order), the sizes, both sets of eviction
candidates and the copies in flight; every invariant must hold.
"""
from __future__ import annotations

import random

import pytest

from radixviz.cache import POLICY_NAMES
from radixviz.cache.write_policy import WRITE_POLICY_NAMES
from reference_hicache import HiPair

STEPS = 300


def page_patterns(page: int) -> list:
    if page == 1:
        return ["a", "b", "c"]
    return ["a" * page, "a" * (page - 1) + "b", "b" + "a" * (page - 1)]


def random_run(pair: HiPair, page: int, rng: random.Random, steps: int) -> None:
    """``steps`` random operations. Keys come from a few long documents (cut at a random page,
    sometimes with a new ending), so evicted prefixes come back often enough, and long
    enough, to be loaded back; three patterns that share leading tokens make edges split."""
    patterns = page_patterns(page)
    pages = 24 if page == 1 else 7
    documents = ["".join(rng.choice(patterns) for _ in range(pages)) for _ in range(4)]
    for _ in range(steps):
        doc = rng.choice(documents)
        key = doc[:page * rng.randint(1, pages)]
        if rng.random() < 0.3:
            key += "".join(rng.choice(patterns) for _ in range(rng.randint(1, 3)))
        tail = "a" * rng.randint(0, page - 1)
        roll = rng.random()
        if roll < 0.30:
            pair.apply(("insert", key, rng.randint(0, 3)))
        elif roll < 0.40:
            pair.apply(("match", key + tail))
        elif roll < 0.54:
            pair.apply(("load", key + tail))
        elif roll < 0.61:
            pair.apply(("lock", key))
        elif roll < 0.69:
            pair.apply(("unlock", rng.randint(0, 10)))
        elif roll < 0.81:
            pair.apply(("evict", rng.randint(1, 6 * page + 10)))
        elif roll < 0.85:
            pair.apply(("evict_host", rng.randint(1, 4 * page + 8)))
        elif roll < 0.93:
            pair.apply(("check",))
        else:
            pair.apply(("sync",))


@pytest.mark.parametrize("host", ["default", "tight"])
@pytest.mark.parametrize("eviction", POLICY_NAMES)
@pytest.mark.parametrize("page", (1, 4))
@pytest.mark.parametrize("write_policy", WRITE_POLICY_NAMES)
def test_engine_matches_reference_step_by_step(write_policy, page, eviction, host):
    device = 32 if page == 1 else 64
    pair = HiPair(page, eviction, write_policy, device, None if host == "default" else device + page)
    random_run(pair, page, random.Random(f"{write_policy}-{page}-{eviction}-{host}"), STEPS)
    assert pair.steps == STEPS
    # the run reached the host tier: copies written, demoted, hit on the host, host evictions
    assert pair.seen["host only"] and pair.seen["host hit"] and pair.seen["written"]
    assert pair.seen["demoted"] and pair.seen["host_evicted"] and pair.seen["in flight"]
    if write_policy == "write_through_selective":
        assert pair.seen["dropped"]   # nodes hit once have no host copy: eviction deletes them
    else:
        assert pair.seen["loaded"] or host == "tight"   # (selective loads: test_hicache_engine.py)
