"""What the host tier adds: the same requests on the GPU-only cache and on the hierarchical
cache with host pools of several sizes (``simulate --engine hicache --sweep host=...``).

The baseline is today's cache (engine ``2026``) with the same page size and eviction
policy, so the only difference is the host tier. Each point keeps the run's totals: hit
rate, prompt tokens reused (split into those found on the device and those loaded back
from the host), prompt tokens computed, and the tokens the engine moved each way.
"""
from __future__ import annotations

from dataclasses import dataclass

from radixviz.cache.options import EVICTION, PAGE, WRITE_POLICY

from .runner import replay
from .workloads import make_workload


@dataclass(frozen=True)
class HostPoint:
    host_size: int | None     # the host pool's slots; None: the GPU-only baseline
    stats: object             # SimStats
    settings: dict

    @property
    def label(self) -> str:
        return "GPU only" if self.host_size is None else f"{self.host_size:,}"

    def to_dict(self) -> dict:
        stats = self.stats.to_dict()
        stats.setdefault("device_hit_tokens", self.stats.hit_tokens)
        return {"host_size": self.host_size, "engine": self.settings["engine"], **stats}


def host_options(page_size: int = PAGE.default, eviction_policy: str = EVICTION.default,
                 write_policy: str = WRITE_POLICY.default, host_size: int | None = None,
                 head_bugs: tuple = ()) -> dict:
    """The hicache engine's options for the Scheduler (``engine_options``); ``head_bugs``
    brings back SGLang's 9fbe6800a write_back bugs (cache/hicache/head_bugs.py)."""
    return {"page_size": page_size, "eviction_policy": eviction_policy, "write_policy": write_policy,
            "host_size": host_size, **({"head_bugs": tuple(head_bugs)} if head_bugs else {})}


def run_host_sweep(host_sizes, policy: str = "lpm", *, workload: str | None = None, specs=None,
                   requests: int = 64, pool_size: int = 2048, seed: int = 0, page_size: int = PAGE.default,
                   eviction_policy: str = EVICTION.default, write_policy: str = WRITE_POLICY.default,
                   head_bugs: tuple = (), **options) -> list[HostPoint]:
    """The GPU-only baseline, then the hierarchical cache at each host size, all on the same
    requests (``specs``, or ``workload``'s). ``options`` go to the Scheduler."""
    traffic = specs if specs is not None else make_workload(workload, requests, seed)
    name = workload or "trace"
    base = replay(traffic, policy, pool_size, seed, workload=name, engine="2026",
                  engine_options={"page_size": page_size, "eviction_policy": eviction_policy}, **options)
    points = [HostPoint(None, base.stats, base.settings)]
    for host in host_sizes:
        result = replay(traffic, policy, pool_size, seed, workload=name, engine="hicache",
                        engine_options=host_options(page_size, eviction_policy, write_policy, host, head_bugs),
                        **options)
        # host None is SGLang's default size: the point names the size the engine took
        points.append(HostPoint(result.settings["host_size"], result.stats, result.settings))
    return points
