"""One-call runs: a named workload through one policy, or through several to compare."""
from __future__ import annotations

from typing import TYPE_CHECKING

import inspect
from collections.abc import Callable

from .defaults import OPTIMUM_UP_TO
from .drive import RunObserver, drive
from .fake_model import FakeSampler
from .pass_hooks import with_hooks
from .policies import POLICIES
from .records import SimResult
from .scheduler import Scheduler
from .workloads import CountsItself, StreamedWorkload, make_workload, request_count

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from radixviz.cache import TokenToKVPool


def _tiny_model(pool: TokenToKVPool, seed: int):
    from .tiny_model import TinyModel  # torch's nn for real K/V in the pool: only when asked for
    return TinyModel(pool, seed=seed)


# name -> factory(pool, seed) -> TokenModel
MODELS: dict[str, Callable] = {
    "fake": lambda pool, seed: FakeSampler(seed),
    "tiny": _tiny_model,
}


def simulate(workload: str, policy: str | None = None, requests: int = 64, pool_size: int = 4096,
             seed: int = 0, model: str | Callable = "fake", record: bool = False,
             **options: Any) -> SimResult:
    """Run ``requests`` requests of ``workload`` under ``policy`` to the end (None: the
    scheduler's default, lpm for the release's loop and fcfs for ``scheduler="v0.5.23"``).

    ``model`` is a name in MODELS or a factory ``(pool, seed) -> TokenModel``; ``options``
    go to Scheduler (context_len, max_running, decode_steps, delay_shared_prefix, ...).
    """
    specs = make_workload(workload, requests, seed)
    return replay(specs, policy, pool_size, seed, model, record, workload=workload, **options)


def replay(specs, policy: str | None = None, pool_size: int = 4096, seed: int = 0,
           model: str | Callable = "fake", record: bool = False, workload: str = "custom",
           progress: Callable | None = None, arrivals: Callable | None = None,
           keep_outputs: bool = True, optimum: bool | None = None, max_waiting: int | None = None,
           **options: Any) -> SimResult:
    """Run the given RequestSpecs (a workload, a trace) under ``policy`` to the end (None:
    the scheduler's default, as ``simulate``).

    ``progress(finished, total)``, when given, is called after every scheduler pass.
    ``arrivals()``, when given instead of ``specs`` (pass None), returns a fresh iterator
    of ``(arrival_pass or None, RequestSpec)`` sorted by arrival: a trace streamed from its
    file (drive.py). The result's ``traffic`` holds the optimum beside the hit rate and the
    latency. ``optimum``: True or False; None (the default) counts it for runs of at most
    ``OPTIMUM_UP_TO`` requests (its tables grow with the trace's distinct content, and it
    took more CPU than the run itself on long traces). ``keep_outputs=False`` forgets
    generated tokens as requests finish; ``max_waiting`` bounds the queue (drive.py)."""
    if isinstance(specs, StreamedWorkload):   # a StreamedTrace (sim/traces): read as the run goes
        arrivals, specs = specs.arrivals, None
    factory = _model_factory(model)
    sched = Scheduler(pool_size, policy, seed=seed, record=record, **options)
    # the pool is built first so a real model can own its KV there
    sched.model = factory(sched.pool, seed)
    total = request_count(specs) if specs is not None else None
    sched.settings.update(workload=workload, requests=total, model=_model_name(model))
    stream = arrivals.__self__ if inspect.ismethod(arrivals) else None
    if stream is not None:   # a stream's own arrivals: how it is read (format, pace)
        sched.settings["trace"] = dict(getattr(stream, "described", {}))
    known = total if total is not None else request_count(stream) if isinstance(stream, CountsItself) else None
    if optimum is None:
        optimum = known is not None and known <= OPTIMUM_UP_TO
    sched.settings["optimum"] = optimum
    observer = RunObserver(sched, optimum)
    observer.max_waiting = max_waiting
    feed = arrivals() if arrivals is not None else ((None, spec) for spec in specs)
    drive(sched, feed, observer, with_hooks(sched, progress), known, keep_outputs, max_waiting)
    if total is None:
        sched.settings["requests"] = sched.stats.requests
    result = sched.result()
    result.traffic = observer.report(result.stats.hit_rate)
    return result


def compare(workload: str, policies: Iterable[str] = tuple(POLICIES), **kwargs: Any) -> dict:
    """Policy name -> SimResult, every policy on exactly the same requests."""
    return {name: simulate(workload, name, **kwargs) for name in policies}


def _model_factory(model) -> Callable:
    if callable(model):
        return model
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}: choose from {', '.join(MODELS)}")
    return MODELS[model]


def _model_name(model) -> str:
    return model if isinstance(model, str) else getattr(model, "__name__", "custom")
