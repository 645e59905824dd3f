"""Time to first token, counted two ways, and how much of it the requests that missed caused.

sgl-project/sglang#31954 asked whether ordering by longest prefix starves the requests that
find nothing cached: there, the few requests that missed made up most of the total time to
first token. We count, per request, from the pass it entered the queue to the end of its
first prefill:

- ``passes``: queue wait in scheduler passes, plus the one prefill pass (every pass counts
  one, however much it computed);
- ``tokens``: the tokens the loop computed meanwhile (prefill and decode), a clock on which
  a long uncached prefill takes long, as it does on a GPU.

A request *missed* when its first prefill reused nothing. The tallies are histograms
(passes) and running sums, so a million requests cost no more memory than a hundred.
"""
from __future__ import annotations

from collections import Counter

QUANTILES = (0.5, 0.95, 0.99)


def quantile(histogram: Counter, q: float) -> int:
    """The nearest-rank quantile of a histogram of whole numbers (0 when empty)."""
    total = sum(histogram.values())
    if not total:
        return 0
    rank = max(1, -(-int(q * total * 1000) // 1000))   # ceil(q * total), without float drift
    seen = 0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= rank:
            return value
    return max(histogram)


class LatencyTally:
    def __init__(self):
        self.passes: Counter = Counter()          # ttft in passes -> requests
        self.passes_missed: Counter = Counter()
        self.sums = {"passes": 0, "tokens": 0, "passes_missed": 0, "tokens_missed": 0}
        self.requests = self.missed = 0
        self.token_samples: Counter = Counter()   # ttft in tokens, bucketed to 2 significant digits

    def add(self, waited_passes: int, waited_tokens: int, prefix_len: int) -> None:
        ttft = waited_passes + 1
        missed = prefix_len == 0
        self.requests += 1
        self.passes[ttft] += 1
        self.sums["passes"] += ttft
        self.sums["tokens"] += waited_tokens
        self.token_samples[_two_digits(waited_tokens)] += 1
        if missed:
            self.missed += 1
            self.passes_missed[ttft] += 1
            self.sums["passes_missed"] += ttft
            self.sums["tokens_missed"] += waited_tokens

    def report(self) -> dict:
        def share(part: int, whole: int):
            return round(part / whole, 6) if whole else None

        quantiles = {f"p{round(q * 100)}": quantile(self.passes, q) for q in QUANTILES}
        return {
            "requests": self.requests,
            "ttft_passes": {**quantiles, "mean": round(self.sums["passes"] / self.requests, 3)
                            if self.requests else 0, "max": max(self.passes, default=0)},
            "ttft_tokens": {f"p{round(q * 100)}": quantile(self.token_samples, q) for q in QUANTILES},
            "missed": {"requests": self.missed, "share_of_requests": share(self.missed, self.requests),
                       "p95_passes": quantile(self.passes_missed, 0.95),
                       "share_of_ttft_passes": share(self.sums["passes_missed"], self.sums["passes"]),
                       "share_of_ttft_tokens": share(self.sums["tokens_missed"], self.sums["tokens"])},
        }


def _two_digits(n: int) -> int:
    """``n`` rounded down to two significant digits: 1234 -> 1200 (a bounded histogram)."""
    if n < 100:
        return n
    scale = 10 ** (len(str(n)) - 2)
    return n // scale * scale
