"""Capacity sweeps people can read: every combination of pool, host and page sizes.

``simulate --sweep pool=1024,4096,page=1,16`` names several settings at once (a name
starts each group of values); every policy runs at every combination on the same requests.
Each point keeps three numbers: the hit rate, its share of the optimum (optimum.py), and the
95th percentile of time to first token in passes (latency.py).

The engine follows from what is swept: a host size needs the hierarchical cache
(``hicache``), a page size today's cache (``2026``); pool sizes alone run on the engine
asked for.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import itertools
from dataclasses import dataclass

from radixviz.cache.engines import engine_spec
from radixviz.cache.options import WRITE_POLICY

from .runner import replay
from .workloads import make_workload

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


GRID_KEYS = ("pool", "host", "page")


@dataclass(frozen=True)
class GridPoint:
    setting: dict          # pool / host / page -> value, for the keys swept
    policy: str
    stats: Any             # SimStats
    traffic: dict          # optimum, latency

    @property
    def label(self) -> str:
        return " ".join(f"{k} {v:,}" for k, v in self.setting.items())

    @property
    def share_of_optimal(self):
        return self.traffic["optimum"]["share_of_optimal"]

    @property
    def p95_ttft(self) -> int:
        return self.traffic["latency"]["ttft_passes"]["p95"]

    def to_dict(self) -> dict:
        return {**self.setting, "policy": self.policy, "hit_rate": round(self.stats.hit_rate, 6),
                "share_of_optimal": self.share_of_optimal, "p95_ttft_passes": self.p95_ttft,
                "optimal_hit_rate": self.traffic["optimum"]["optimal_hit_rate"],
                "stats": self.stats.to_dict(), "latency": self.traffic["latency"]}


def is_grid(text: str) -> bool:
    return text.count("=") > 1


def parse_grid(text: str) -> dict:
    """``pool=512,1024,page=1,16`` -> {"pool": [512, 1024], "page": [1, 16]}; ValueError."""
    grid: dict = {}
    key = None
    for item in (part.strip() for part in text.split(",")):
        if "=" in item:
            key, _, item = (s.strip() for s in item.partition("="))
            if key not in GRID_KEYS:
                raise ValueError(f"--sweep: {key!r} cannot be swept with others: use {', '.join(GRID_KEYS)}")
            if key in grid:
                raise ValueError(f"--sweep: {key} is given twice")
            grid[key] = []
        if key is None:
            raise ValueError("--sweep takes NAME=V,V,...,NAME=V,...")
        try:
            value = int(item)
        except ValueError:
            raise ValueError(f"--sweep {key}: {item!r} is not a whole number") from None
        if value in grid[key]:
            raise ValueError(f"--sweep {key}: {value} is given twice")
        grid[key].append(value)
    return grid


def engine_for(grid: dict, engine: str) -> str:
    return "hicache" if "host" in grid else "2026" if "page" in grid else engine


def run_grid(grid: dict, policies: Sequence[str], *, specs=None, workload: str | None = None, requests: int = 64,
             pool_size: int = 1024, seed: int = 0, engine: str = "2024", page_size: int = 1,
             eviction_policy: str = "lru", **options: Any) -> list[GridPoint]:
    """Every policy at every combination of ``grid``'s values (in the order given)."""
    traffic = specs if specs is not None else make_workload(workload, requests, seed)
    name = engine_for(grid, engine)
    spec = engine_spec(name)
    points = []
    for combo in itertools.product(*grid.values()):
        setting = dict(zip(grid, combo))
        pool, page = setting.get("pool", pool_size), setting.get("page", page_size)
        # every setting a point has; the engine keeps those it declares (none for 2024's)
        engine_options = spec.pick({"page_size": page, "eviction_policy": eviction_policy,
                                     "write_policy": WRITE_POLICY.default, "host_size": setting.get("host")})
        for policy in policies:
            result = replay(traffic, policy, pool, seed, workload=workload or "trace", engine=name,
                            engine_options=engine_options, **options)
            points.append(GridPoint(setting, policy, result.stats, result.traffic))
    return points
