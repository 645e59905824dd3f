"""Run the simulation and the reference loop side by side and say where they part.

Shared by the CI test (tests/test_sim_reference.py) and the larger sweep
(bench/sim_reference.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from radixviz.sim import FakeSampler, Scheduler, make_workload

from reference_scheduler import ReferenceRouter

OUT_OF_MEMORY = ("prefill-deferred", "retracted")


@dataclass
class Agreement:
    config: tuple
    passes: int               # passes compared
    first_oom: int | None     # the pass both ran out of memory on (None: neither did)
    difference: str           # empty when they agree
    # sim_passes' own (passes, first_oom, scheduler) that was compared: a test that checks more
    # of the same run reads it here instead of simulating it again (those second runs took
    # about 2 s of the ~75 s of CPU of the tests a change to the 2024 engine picks, traced)
    simulation: tuple = field(default=(), repr=False, compare=False)

    @property
    def agrees(self) -> bool:
        return not self.difference


def sim_passes(workload, requests, policy, pool_size, seed, **options):
    """The simulation's passes as (kind, admitted, hit, computed, finished), and the first OOM."""
    sched = Scheduler(pool_size, policy, seed=seed, record=False, **options)
    sched.submit(make_workload(workload, requests, seed))
    passes, first_oom = [], None
    while (record := sched.step()) is not None:
        if any(e.kind in OUT_OF_MEMORY for e in record.events):
            first_oom = record.index
            break
        passes.append((record.kind, record.admitted, record.hit_tokens,
                       record.computed_tokens, record.finished))
    return passes, first_oom, sched


def reference_passes(workload, requests, policy, pool_size, seed, context_len=1024,
                     in_batch_threshold=None, cache_filled=False):
    router = ReferenceRouter(pool_size, policy, FakeSampler(seed), seed=seed, context_len=context_len,
                             in_batch_threshold=in_batch_threshold, cache_filled=cache_filled)
    for spec in make_workload(workload, requests, seed):
        router.add(spec.input_ids, spec.max_new_tokens, spec.follow_ups)
    router.run()
    passes = [(p.kind, p.admitted, p.hit_tokens, p.computed_tokens, p.finished)
              for p in router.passes]
    return passes, router.out_of_memory_at, router


def compare(workload, requests, policy, pool_size, seed, **options) -> Agreement:
    simulation = sim_passes(workload, requests, policy, pool_size, seed, **options)
    result = _compare((workload, requests, policy, pool_size, seed), simulation, options)
    result.simulation = simulation
    return result


def _compare(config, simulation, options) -> Agreement:
    mine, my_oom, sched = simulation
    workload, requests, policy, pool_size, seed = config
    in_batch = options.get("delay_threshold", 32) if options.get("delay_shared_prefix") else None
    theirs, their_oom, router = reference_passes(workload, requests, policy, pool_size, seed,
                                                 options.get("context_len", 1024), in_batch,
                                                 options.get("cache_unfinished", False))
    if router.truncated or sched.stats.refused:
        return Agreement(config, 0, None, f"not comparable: the release truncates {router.truncated} "
                                          f"requests, the simulation refuses {sched.stats.refused}")
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            return Agreement(config, i, my_oom, f"pass {i}: simulation {_show(a)}, release {_show(b)}")
    if my_oom != their_oom:
        return Agreement(config, min(len(mine), len(theirs)), None,
                         f"out of memory: simulation at pass {my_oom}, release at pass {their_oom}")
    if len(mine) != len(theirs):
        return Agreement(config, min(len(mine), len(theirs)), None,
                         f"simulation ran {len(mine)} passes, release {len(theirs)}")
    return Agreement(config, len(mine), my_oom, "")


def _show(p) -> str:
    kind, admitted, hit, computed, finished = p
    return f"{kind} admitted {list(admitted)} hit {hit} computed {computed} finished {list(finished)}"
