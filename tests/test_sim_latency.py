"""Time to first token per policy, and the share of it the requests that missed caused (#31954)."""
from collections import Counter

from hypothesis import given, strategies as st

from radixviz.sim.latency import quantile
from radixviz.sim.request import RequestSpec
from radixviz.sim.runner import replay


@given(st.lists(st.integers(0, 50), min_size=1, max_size=60), st.sampled_from([0.5, 0.95, 0.99]))
def test_quantile_of_the_histogram_is_the_nearest_rank_of_the_list(values, q):
    ordered = sorted(values)
    rank = -(-int(q * len(values) * 1000) // 1000)
    assert quantile(Counter(values), q) == ordered[max(rank, 1) - 1]


def two_requests(shared: bool):
    a = tuple(range(10))
    b = a[:8] + (50, 51) if shared else tuple(range(100, 110))
    return [RequestSpec(a, 3), RequestSpec(b, 2)]


class TestOneAtATime:
    """A runs first: prefill (pass 0) and two decodes (1, 2); B's prefill is pass 3."""

    def test_passes_count_the_queue_wait_and_the_prefill(self):
        latency = replay(two_requests(False), "fcfs", 256, max_running=1).traffic["latency"]
        assert latency["ttft_passes"]["p50"] == 1 and latency["ttft_passes"]["max"] == 4
        # tokens the loop computed before B's first token: A's 10 and 2 decodes, B's own 10
        assert latency["ttft_tokens"]["p99"] == 22

    def test_requests_that_miss_carry_their_share_of_the_wait(self):
        cold = replay(two_requests(False), "fcfs", 256, max_running=1).traffic["latency"]["missed"]
        assert cold["requests"] == 2 and cold["share_of_ttft_passes"] == 1.0
        warm = replay(two_requests(True), "fcfs", 256, max_running=1).traffic["latency"]["missed"]
        assert warm["requests"] == 1 and warm["share_of_ttft_passes"] == 0.2   # A's 1 of 1 + 4


class Stream:
    """Requests that arrive in time (what a streamed trace hands replay)."""

    def __init__(self, pairs):
        self.pairs = pairs

    def arrivals(self):
        return iter(self.pairs)


def test_longest_prefix_first_starves_the_cold_requests():
    """Hot requests behind one long prompt keep arriving, two a pass; three cold ones come
    early. lpm keeps serving the hot ones (most requests get their first token sooner) and
    sorts the cold ones behind every newcomer, so they wait far longer than under fcfs and
    carry more of the total wait: #31954's question, answered on a small pool."""
    hot = tuple(range(1000, 1200))
    pairs = []
    for i in range(80):
        pairs.append((i // 2, RequestSpec(hot + (5000 + i,), 30)))
        if i in (5, 6, 7):
            pairs.append((i // 2, RequestSpec(tuple(range(10000 * i, 10000 * i + 150)), 30)))
    runs = {policy: replay(Stream(pairs), policy, 400).traffic["latency"] for policy in ("lpm", "fcfs")}
    lpm, fcfs = runs["lpm"], runs["fcfs"]
    assert lpm["ttft_passes"]["p50"] < fcfs["ttft_passes"]["p50"]
    assert lpm["missed"]["p95_passes"] > 2 * fcfs["missed"]["p95_passes"]
    assert lpm["missed"]["share_of_ttft_passes"] > fcfs["missed"]["share_of_ttft_passes"]
