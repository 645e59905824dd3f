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
           block_units: bool | None = None, **options: Any) -> SimResult:
    """Run the given RequestSpecs (a workload, a trace) under ``policy`` to the end (None:
    the scheduler's default, as ``simulate``).

    ``progress(finished, total)``, when given, is called after every scheduler pass.
    ``arrivals()``, when given instead of ``specs`` (pass None), returns a fresh iterator
    of ``(arrival_pass or None, RequestSpec)`` sorted by arrival: a trace streamed from its
    file (drive.py). The result's ``traffic`` holds the optimum beside the hit rate and the
    latency. ``optimum``: True or False; None (the default) counts it for runs of at most
    ``OPTIMUM_UP_TO`` requests (its tables grow with the trace's distinct content, and it
    took more CPU than the run itself on long traces). ``keep_outputs=False`` forgets
    generated tokens as requests finish; ``max_waiting`` bounds the queue (drive.py).
    ``block_units``: key the engine by a Mooncake trace's blocks (sim/block_units.py; the
    same answer as token by token): None (the default) where the trace has blocks and the
    loop can, True to insist (ValueError where not), False for the token path."""
    if isinstance(specs, StreamedWorkload):   # a StreamedTrace (sim/traces): read as the run goes
        arrivals, specs = specs.arrivals, None
    factory = _model_factory(model)
    stream = arrivals.__self__ if inspect.ismethod(arrivals) else None
    units = _block_units(stream, block_units, record, model)
    sched = Scheduler(pool_size, policy, seed=seed, record=record,
                      block_units=False if units is None else block_units, **options)
    # the pool is built first so a real model can own its KV there
    sched.model = factory(sched.pool, seed)
    total = request_count(specs) if specs is not None else None
    sched.settings.update(workload=workload, requests=total, model=_model_name(model))
    if stream is not None:   # a stream's own arrivals: how it is read (format, pace)
        trace = sched.settings["trace"] = dict(getattr(stream, "described", {}))
        if "block_size" in trace:   # how the tree compared its prompts (the answer is the same)
            trace["keyed_by"] = "blocks" if sched.block_units else "tokens"
    known = total if total is not None else request_count(stream) if isinstance(stream, CountsItself) else None
    if optimum is None:
        optimum = known is not None and known <= OPTIMUM_UP_TO
    sched.settings["optimum"] = optimum
    observer = RunObserver(sched, optimum)
    observer.max_waiting = max_waiting
    if sched.block_units and arrivals is not None:
        feed = arrivals(units)
    else:
        feed = arrivals() if arrivals is not None else ((None, spec) for spec in specs)
    drive(sched, feed, observer, with_hooks(sched, progress), known, keep_outputs, max_waiting)
    if total is None:
        sched.settings["requests"] = sched.stats.requests
    result = sched.result()
    result.traffic = observer.report(result.stats.hit_rate)
    return result


def _block_units(stream, asked: bool | None, record: bool, model):
    """The stream's blocks as units (traces/block_cuts.py) when a run may key by them, else None.
    Only the named models: their tokens stay below the vocabulary, where units keep tokens single."""
    offer = getattr(stream, "block_units", None)
    if asked is False or (asked is None and (record or not isinstance(model, str))):
        return None
    units = offer() if offer is not None else None
    if asked and units is None:
        raise ValueError("block_units: the trace has no blocks to key by (a Mooncake trace's hash_ids)")
    if asked and not isinstance(model, str):
        raise ValueError("block_units: a model of your own may emit any token id: run with a named model")
    return units


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
