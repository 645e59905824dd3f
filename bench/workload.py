"""The seeded workload bench/core.py and bench/modern_core.py both drive: long prompts that
share a few popular system prompts and some shots, each with a question of its own.

Its own module so the two benchmarks import it from below and not each other (core.py also
runs modern_core.py's comparison; a shared workload in core.py made that a circle).
"""
from __future__ import annotations

import random

DEFAULT = dict(requests=2000, system_prompts=12, system_len=(800, 3000), shots=(0, 3),
               shot_len=(100, 400), user_len=(100, 800), output_len=(20, 200), pool=150_000)
QUICK = dict(DEFAULT, requests=300, pool=40_000)


def make_workload(seed: int, requests: int, system_prompts: int, system_len, shots, shot_len,
                  user_len, output_len, vocab: int = 32_000, **_) -> list:
    """(prompt, output) token tuples: a popular system prompt, shared shots, a unique question."""
    rng = random.Random(seed)

    def tokens(bounds):
        return tuple(rng.randrange(vocab) for _ in range(rng.randint(*bounds)))

    systems = [tokens(system_len) for _ in range(system_prompts)]
    examples = [tokens(shot_len) for _ in range(4 * system_prompts)]
    weights = [1 / (i + 1) for i in range(system_prompts)]  # a few prompts are very popular
    out = []
    for _ in range(requests):
        prompt = rng.choices(systems, weights)[0]
        for _ in range(rng.randint(*shots)):
            prompt += rng.choice(examples)
        prompt += tokens(user_len)
        out.append((prompt, tokens(output_len)))
    return out
