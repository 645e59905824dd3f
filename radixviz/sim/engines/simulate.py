"""What ``radixviz simulate`` does with one engine: its refusals, its runs and the report they
make, in the engine's sim module (``EngineSpec.sim``) as the class ``SIMULATION``.

``Simulation`` is the shared path, the first release's cache in its own loop (and a plug-in
engine without a module of its own): one run per scheduling policy, ``--sweep pool=`` or
``requests=``, and ``--insert release`` where the engine's hooks take it. Today's cache
(engines/v2026/sim.py) adds pages and eviction policies, the host tier (engines/hicache/sim.py) its
host pool beside the GPU-only cache. The command (commands/simulate.py) builds the engine's
``Simulation`` on its arguments and asks it in a fixed order: ``check_sweep`` while the
options are parsed, ``cluster_cache`` for ``--workers``, ``check`` and ``prepare`` before
any run, ``app_cache`` for ``--app``, else ``run``; render/sim_report.py prints the report.
Nothing here prints, and nothing loads torch before ``run``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol

from radixviz.cache.engines import EngineSpec, flag_owners
from radixviz.cache.options import EVICTION, PAGE, WRITE_POLICY
from radixviz.errors import UsageError

from ..schedule_v0523 import RELEASE_LOOP
from ..workloads import make_workload, request_count
from . import hooks_class

if TYPE_CHECKING:
    from collections.abc import Sequence
    from radixviz.sim.request import RequestSpec

# ``progress_for(label, total)``: the command's progress line for one run (or None)
Progress = Callable[[str, int], Any]


def owners(capability: str) -> str:
    """``2026|hicache``: the engines with ``capability``, for a refusal's advice."""
    return flag_owners(capability)


@dataclass(frozen=True)
class SimulateArgs:
    """What the command line asked ``simulate`` for, as an engine's ``Simulation`` reads it
    (commands/simulate.py builds it from its parsed arguments: ``from_namespace``)."""
    engine: str
    workload: str
    model: str
    policy: str | None            # --policy as typed (None: not given)
    compare: str | None           # --compare as typed
    sweep: str | None             # --sweep as typed (the parsed one is the options' "sweep")
    app: bool
    insert: str                   # fixed | release (#4)
    page_size: str                # --page-size as typed (parsed by the engine that takes it)
    eviction_policy: str          # one name or several, comma-separated
    host_size: int | None
    write_policy: str
    head_bugs: tuple | None
    delay_shared_prefix: bool
    cache_unfinished: bool
    hold_back_shared_prefix: bool
    scheduler: str | None         # --scheduler (the command resolves None to the engine's own)
    logprob_start: int | None     # --logprob-start

    @classmethod
    def from_namespace(cls, args: Any) -> SimulateArgs:
        """The fields of ``args`` (argparse's Namespace) this class names; absent: None/False."""
        values: dict[str, Any] = {f.name: getattr(args, f.name, False if f.type == "bool" else None)
                                  for f in fields(cls)}
        return cls(**values)


class Report(Protocol):
    """What a ``Simulation`` run returns: its JSON, and a text view by its type (render/sim_report.py)."""
    @property
    def engine(self) -> str: ...

    def to_json(self) -> dict: ...


@dataclass(frozen=True)
class PolicyRuns:
    """One run per column: a scheduling policy, or (today's cache) an eviction policy."""
    engine: str
    workload: str
    results: dict                 # column name -> SimResult
    table: str                    # "single", "compare" (a column per run) or "evictions" (a row per run)
    header: dict | None = None    # another engine's cache in the 2024 loop: what it is, first

    def to_json(self) -> dict:
        doc = {name: result.to_dict() for name, result in self.results.items()}
        if self.header is not None:
            return {**self.header, "workload": self.workload, "results": doc}
        return {"workload": self.workload, "results": doc} if self.table == "compare" else next(iter(doc.values()))


@dataclass(frozen=True)
class SweepRuns:
    """``--sweep NAME=V,V,...``: every column at every value."""
    engine: str
    workload: str
    key: str
    values: list
    policies: list
    settings: dict                # the run's fixed settings (requests, pool_size, seed, ...)
    requests: int                 # how many requests each run had
    points: list                  # SweepPoint
    header: dict | None = None

    def to_json(self) -> dict:
        return {**(self.header or {}), "workload": self.workload, "sweep": {self.key: self.values},
                "policies": self.policies, "settings": dict(self.settings),
                "results": [p.to_dict(self.key) for p in self.points]}


class Simulation:
    """The shared path (see the module's docstring); ``args`` are the command's, parsed."""

    def __init__(self, spec: EngineSpec, args: SimulateArgs, own: dict | None = None):
        self.spec, self.args = spec, args
        self.own = own or {}          # the registry-made flags given (the engine's own options)
        self.policies: list = []      # set by ``prepare``, as ``sweep`` (key, values) or None
        self.sweep: tuple | None = None

    # ------------------------------------------------------------------ refusals

    def check_sweep(self, key: str) -> None:
        """UsageError for a one-setting sweep this engine cannot run."""
        if key == "host":
            raise UsageError(f"--sweep host= varies the host tier's size: add --engine {owners('host_tier')}")
        if key == "page":
            raise UsageError(f"--sweep page= varies an engine's pages: add --engine {owners('pages')}")

    def cluster_cache(self) -> tuple[int, str | None]:
        """(page size, eviction policy or None) of each worker under ``--workers``."""
        return PAGE.default, None

    def check(self) -> None:
        """UsageError for the options this engine does not take, before any run."""
        self.check_insert()
        args = self.args
        if args.host_size is not None or args.write_policy != WRITE_POLICY.default:
            raise UsageError(f"--host-size and --write-policy need --engine {owners('host_tier')}")

    def check_insert(self) -> None:
        """``--insert release`` runs on an engine whose loop hooks take it, in one plain run."""
        args = self.args
        if args.insert != "fixed" and (not hooks_class(self.spec).runs_release_insert or args.sweep or args.app):
            raise UsageError(f"--insert release is the 2024 release's bug (#4): with --engine "
                             f"{owners('release_insert')}, without --sweep or --app")

    def prepare(self, options: dict) -> None:
        """Parse and check this engine's cache options; ``options`` loses ``policies``."""
        args = self.args
        if args.page_size != str(PAGE.default) or args.eviction_policy != EVICTION.default:
            raise UsageError(f"--page-size and --eviction-policy need --engine {owners('pages')}")
        self.policies, self.sweep = options.pop("policies"), options.pop("sweep", None)

    # ------------------------------------------------------------------ runs

    def app_cache(self) -> dict | None:
        """The cache settings the app's scheduler screen opens: this engine and its own
        options given (its form shows a field for each option it takes)."""
        return {"engine": self.spec.name, "engine_options": dict(self.own)}

    def loop_options(self) -> dict:
        """What every run's Scheduler takes besides the traffic, the policy and the pool."""
        args = self.args
        common = {"model": args.model, "engine": args.engine, **later_options(args)}
        if self.own:
            common["engine_options"] = self.own
        return common

    def run(self, specs: Sequence[RequestSpec] | None, name: str, options: dict, progress: Progress) -> Report:
        """Every run the command asked for, on ``specs`` (None: the named workload's)."""
        from ..runner import replay  # imports torch

        common = self.loop_options()
        if self.sweep is not None:
            return run_sweep(self.spec.name, name, self.sweep, self.policies, specs, options, common)
        common["insert"] = self.args.insert
        requests, pool_size, seed = (options.pop(k) for k in ("requests", "pool_size", "seed"))
        if specs is None:
            specs = make_workload(self.args.workload, requests, seed)
        results = {}
        for policy in self.policies:
            shown = progress(policy, request_count(specs))
            results[policy] = replay(specs, policy, pool_size, seed, workload=name, progress=shown,
                                     **common, **options)
            if shown is not None:
                shown.done()
        table = "compare" if self.args.compare else "single"
        return PolicyRuns(self.spec.name, name, results, table)


def later_options(args: Any) -> dict:
    """The Scheduler switches for what SGLang changed after the first release (from a
    SimulateArgs, or the command's parsed arguments)."""
    return {"delay_shared_prefix": args.delay_shared_prefix,
            "cache_unfinished": args.cache_unfinished,
            "hold_back_shared_prefix": args.hold_back_shared_prefix,
            "scheduler": getattr(args, "scheduler", None) or RELEASE_LOOP,
            "logprob_start_len": getattr(args, "logprob_start", None)}


def run_sweep(engine: str, name: str, sweep: tuple, policies: list, specs: Sequence[RequestSpec] | None,
              options: dict, common: dict,
              header: dict | None = None) -> SweepRuns:
    """``sweep`` (key, values) over ``policies``; ``header`` (another engine's cache: its
    settings) goes first in the report."""
    from ..sweep import run_sweep as sweep_runs  # imports torch

    key, values = sweep
    points = sweep_runs(key, values, policies, workload=None if specs else name, specs=specs,
                        **common, **options)
    requests = request_count(specs) if specs else options["requests"]
    return SweepRuns(engine, name, key, values, policies, dict(options), requests, points, header)


def simulation(spec: EngineSpec, args: SimulateArgs, own: dict | None = None) -> Simulation:
    """The engine's own ``Simulation`` (``SIMULATION`` of its sim module) on the command's ``args``."""
    part = spec.part("sim")
    return (getattr(part, "SIMULATION", None) or Simulation)(spec, args, own)
