"""One setting varied, every policy run at each value: the numbers behind ``simulate --sweep``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataclasses import dataclass, field

from .runner import replay
from .engines.factory import todays_cache
from .workloads import make_workload

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


# what --sweep may vary -> the setting it sets (page: today's cache only; host: the host
# tier's pool, run by engines/hicache/sim.py against the GPU-only cache)
SWEEPABLE = {"pool": "pool_size", "requests": "requests", "page": "page_size", "host": "host_size"}


@dataclass(frozen=True)
class SweepPoint:
    value: int
    policy: str
    stats: Any             # SimStats
    eviction: str | None = None   # today's cache: the eviction policy of this column
    traffic: dict = field(default_factory=dict)   # the optimum and latency (drive.py)

    @property
    def column(self) -> str:
        """What the column of this point is named after: the eviction or the scheduling policy."""
        return self.eviction or self.policy

    def to_dict(self, key: str) -> dict:
        named = {"eviction_policy": self.eviction} if self.eviction else {}
        return {key: self.value, "policy": self.policy, **named, **self.stats.to_dict(), **self.traffic}


def parse_sweep(text: str) -> tuple[str, list[int]]:
    """``pool=512,1024`` -> ("pool", [512, 1024]); ValueError with a one-line reason."""
    key, sep, values = text.partition("=")
    key = key.strip()
    if not sep or key not in SWEEPABLE:
        raise ValueError(f"--sweep takes NAME=V,V,... with NAME one of {', '.join(SWEEPABLE)}, "
                         f"not {text!r}")
    numbers = []
    for item in values.split(","):
        item = item.strip()
        try:
            numbers.append(int(item))
        except ValueError:
            raise ValueError(f"--sweep {key}: {item!r} is not a whole number") from None
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"--sweep {key}: a value is given twice")
    return key, numbers


def run_sweep(key: str, values: Sequence[Any], policies: Sequence[str], *, workload: str | None = None, specs=None,
              requests: int = 64, pool_size: int = 2048, seed: int = 0, evictions: Sequence[str] = (),
              page_size: int = 1, **options: Any) -> list[SweepPoint]:
    """Every policy at every value of ``key``; the traffic is ``specs`` or ``workload``'s.

    ``evictions`` names eviction policies of today's cache (``todays_cache``), else the run
    is on the first release's cache. One eviction policy: every scheduling policy runs on
    it. Several: they are the columns, each under the one scheduling policy in ``policies``.
    The page size (``page``) can be swept only on today's cache.
    """
    if key == "page" and not evictions:
        raise ValueError("--sweep page= varies today's cache: it needs --engine 2026")
    columns = ([(policies[0], name) for name in evictions] if len(evictions) > 1
               else [(policy, evictions[0] if evictions else None) for policy in policies])
    points = []
    for value in values:
        setting = {"pool_size": pool_size, "requests": requests, "page_size": page_size,
                   SWEEPABLE[key]: value}
        traffic = specs if specs is not None else make_workload(workload, setting["requests"], seed)
        for policy, eviction in columns:
            cache = {"cache_factory": todays_cache(setting["page_size"], eviction)} if eviction else {}
            result = replay(traffic, policy, setting["pool_size"], seed,
                            workload=workload or "trace", **cache, **options)
            points.append(SweepPoint(value, policy, result.stats,
                                     eviction if len(evictions) > 1 else None, result.traffic))
    return points
