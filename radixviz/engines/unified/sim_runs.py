"""What ``simulate --engine unified`` runs: the model shapes ``--shape`` names, the engine's
options a run resolves from them, and the runs (one a scheduling policy on the shape, beside
the same requests on Full KV alone). The loop's hooks are sim.py's; sim.py names this module's
``UnifiedSimulation`` as the engine's ``SIMULATION``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from radixviz.cache.options import EVICTION, PAGE, SHAPE
from radixviz.errors import UsageError
from radixviz.limits import PAGE_SIZE

from radixviz.sim.engines.simulate import PolicyRuns, Progress, Report, Simulation, later_options, run_sweep
from radixviz.sim.schedule_v0523 import loop_words
from radixviz.sim.workloads import make_workload, request_count

if TYPE_CHECKING:
    from collections.abc import Sequence

    from radixviz.sim.request import RequestSpec

# the model layouts ``--shape`` names, as the unified tree's options. The window and the state
# spacing are scaled to this tool's workloads (prompts of a few hundred tokens): Gemma 3's
# window is 1,024 tokens and FLA's chunk 64, over prompts of thousands
SHAPES: dict[str, dict[str, Any]] = {
    "full": {"components": ("full",)},
    "swa_5to1": {"components": ("full", "swa"), "window": 32},
    "linear": {"components": ("full", "mamba"), "mamba_chunk": 16},
    "hybrid": {"components": ("full", "swa", "mamba"), "window": 32, "mamba_chunk": 16},
}
SWA_FULL_TOKENS_RATIO = 0.8   # SGLang's --swa-full-tokens-ratio default: the SWA pool's share of the Full pool's

def resolve_options(own: dict, shape: str | None, pool_size: int) -> dict:
    """The engine's options for a run: those given, then the shape's for the rest; with SWA
    and no SWA pool given, SGLang's default share of the Full pool (0.8)."""
    options = {k: v for k, v in own.items() if k != SHAPE.name}
    for name, value in SHAPES.get(shape or "", {}).items():
        options.setdefault(name, value)
    if "swa" in options.get("components", ()) and options.get("swa_pool") is None:
        page = options.get("page_size", PAGE.default)
        options["swa_pool"] = max(page, int(pool_size * SWA_FULL_TOKENS_RATIO) // page * page)
    return options


class UnifiedSimulation(Simulation):
    """``simulate --engine unified``: one run per scheduling policy on the shape asked for, and
    the same requests on Full KV alone beside it; per component, the hit rate its rule allows
    and the tokens it cost (``stats.engine_totals``)."""

    def check_sweep(self, key: str) -> None:
        if key in ("host", "page"):
            raise UsageError(f"--engine unified sweeps pool= or requests=, not {key}=")

    def cluster_cache(self) -> tuple[int, str | None]:
        raise UsageError("--workers runs workers with today's cache (--engine 2026): the unified tree "
                         "runs one worker")

    def prepare(self, options: dict) -> None:
        args = self.args
        try:
            page = PAGE_SIZE.parse(args.page_size)
        except ValueError as exc:
            raise UsageError(f"--page-size {exc}") from None
        if "," in args.eviction_policy:
            raise UsageError("--engine unified runs one eviction policy at a time")
        own = {**self.own, "page_size": page, "eviction_policy": args.eviction_policy.strip().lower()}
        self.engine_options = resolve_options(own, self.own.get(SHAPE.name), options["pool_size"])
        try:   # refused here, before any run, as the settings object refuses it
            self.spec.make_settings(options["pool_size"], **self.engine_options)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.policies, self.sweep = options.pop("policies"), options.pop("sweep", None)

    def app_cache(self) -> dict | None:
        return {"engine": self.spec.name, "engine_options": dict(self.engine_options)}

    def loop_options(self) -> dict:
        # v0.5.23 puts every prefilled prompt into the tree (checkpoint_kv_cache)
        return {"model": self.args.model, "engine": self.spec.name, **later_options(self.args),
                "cache_unfinished": True, "engine_options": self.engine_options}

    def header(self) -> dict:
        o = self.engine_options
        words = ", ".join(self.spec.words(o))
        return {"engine": self.spec.name, "scheduler_loop": self.args.scheduler, "shape": self.own.get(SHAPE.name),
                **{k: list(v) if isinstance(v, tuple) else v for k, v in o.items()},
                "note": f"scheduler loop: {loop_words(self.args.scheduler or '')}, its prompts cached after "
                        f"prefill; cache: SGLang v0.5.23's unified tree, {words}"}

    def run(self, specs: Sequence[RequestSpec] | None, name: str, options: dict, progress: Progress) -> Report:
        from radixviz.sim.runner import replay  # imports torch

        common = self.loop_options()
        if self.sweep is not None:
            return run_sweep(self.spec.name, name, self.sweep, self.policies, specs, options, common, self.header())
        requests, pool_size, seed = (options.pop(k) for k in ("requests", "pool_size", "seed"))
        if specs is None:
            specs = make_workload(self.args.workload, requests, seed)
        full_only = self.engine_options.get("components", ("full",)) == ("full",)
        results = {}
        for policy in self.policies:
            runs = [(policy, common)]
            if not full_only:   # the same requests on Full KV alone, beside it
                base = {k: v for k, v in self.engine_options.items() if k in (PAGE.name, EVICTION.name)}
                runs.append((f"{policy}, full only", {**common, "engine_options": base}))
            for label, loop in runs:
                shown = progress(label, request_count(specs))
                results[label] = replay(specs, policy, pool_size, seed, workload=name, progress=shown,
                                        **loop, **options)
                if shown is not None:
                    shown.done()
        table = "compare" if len(results) > 1 else "single"
        return PolicyRuns(self.spec.name, name, results, table, self.header())
