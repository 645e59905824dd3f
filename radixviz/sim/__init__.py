"""The cache in the loop that uses it: the scheduler simulation and the tiny KV model.

``Scheduler`` (see ``radixviz.sim.scheduler`` for the stepping API), ``simulate`` and
``compare`` (``radixviz.sim.runner``), ``make_workload``/``WORKLOADS``, ``POLICIES`` and
``FakeSampler``, ``load_trace`` and ``replay`` are importable from here (the stable
scripting API is documented in docs/simulation-api.md); they load lazily so importing the package
for the model protocol alone stays cheap.
"""
from importlib import import_module

_EXPORTS = {
    "Scheduler": "scheduler", "simulate": "runner", "compare": "runner", "MODELS": "runner",
    "make_workload": "workloads", "WORKLOADS": "workloads", "request_count": "workloads",
    "POLICIES": "policies", "order_queue": "policies", "FakeSampler": "fake_model",
    "Request": "request", "RequestSpec": "request", "SimResult": "records",
    "BatchRecord": "records", "SimEvent": "records", "SimStats": "records",
    "RequestView": "records",
    "Decision": "admission", "admit": "admission", "estimate_available": "admission",
    "replay": "runner", "load_trace": "trace", "TraceError": "trace",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
