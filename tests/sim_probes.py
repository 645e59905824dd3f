"""Measurements taken inside a simulation run, for claims the lessons make about it."""
from __future__ import annotations

from radixviz.sim import Scheduler, make_workload


def _shared(a, b) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _nodes(root) -> dict:
    """id(node) -> (node, tokens above it, its whole key from the root)."""
    found, stack = {}, [(root, ())]
    while stack:
        node, above = stack.pop()
        for child in node.children.values():
            whole = above + tuple(child.key)
            found[id(child)] = (child, len(above), whole)
            stack.append((child, whole))
    return found


class EvictionProbe:
    """Stands in for the scheduler's engine (the facade it drives the cache through) and
    counts, at every eviction, how many of the evicted tokens a waiting request's prompt
    shares (tokens it would have hit)."""

    def __init__(self, sched: Scheduler):
        self.sched, self.engine = sched, sched.engine
        self.evicted = self.needed = 0

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def evict(self, num_tokens, freed=None) -> int:
        before = _nodes(self.engine.root_node)
        count = self.engine.evict(num_tokens, freed)
        after = _nodes(self.engine.root_node)
        waiting = [r.input_ids for r in self.sched.waiting]
        for key in before.keys() - after.keys():
            _, start, whole = before[key]
            length = len(whole) - start
            best = max((_shared(prompt, whole) for prompt in waiting), default=0)
            self.evicted += length
            self.needed += max(0, min(best - start, length))
        return count


def evicted_needed_share(workload: str, requests: int, policy: str, pool_size: int, seed: int) -> float:
    """Of all tokens evicted in the run, the share a then-waiting request's prompt shared."""
    sched = Scheduler(pool_size, policy, seed=seed, record=False)
    probe = EvictionProbe(sched)
    sched.engine = probe
    sched.submit(make_workload(workload, requests, seed))
    sched.run()
    return probe.needed / probe.evicted
