"""``simulate --sweep pool=...,host=...,page=...``: several settings swept at once (sim/capacity.py).
Called from simulate.py when the sweep names more than one setting."""
from __future__ import annotations

from typing import TYPE_CHECKING

import sys

from radixviz.errors import UsageError
from radixviz.settings import HOST_SLOTS, PAGE_SIZE, SIM_POOL_SLOTS

from radixviz.render import capacity_charts as charts
from radixviz.sim.engines.simulate import later_options

from .simulate_modes import load_trace_option

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence


_LIMITS = {"pool": SIM_POOL_SLOTS, "host": HOST_SLOTS, "page": PAGE_SIZE}


def parse_grid_option(text: str) -> dict:
    from radixviz.sim.capacity import parse_grid  # its runs import torch

    try:
        grid = parse_grid(text)
    except ValueError as error:
        raise UsageError(str(error)) from None
    for key, values in grid.items():
        low, high = _LIMITS[key].low, _LIMITS[key].high
        for value in values:
            if not low <= value <= high:
                raise UsageError(f"--sweep {key}: each value must be between {low} and {high}, not {value}")
    return grid


def _check_hosts(grid: dict, pool_size: int, page_size: int) -> None:
    pools, pages = grid.get("pool", [pool_size]), grid.get("page", [page_size])
    for host in grid.get("host", ()):
        if host <= max(pools):
            raise UsageError(f"host size {host}: the host pool must be larger than the pool "
                             f"({max(pools)} slots), as SGLang requires")
        bad = [p for p in pages if host % p]
        if bad:
            raise UsageError(f"host size {host} is not whole pages of {bad[0]}")


def run_grid_cli(args: argparse.Namespace, options: dict, policies: Sequence[str]) -> int:
    from radixviz.sim.capacity import engine_for, run_grid  # imports torch

    grid = options.pop("grid")
    page_size = 1 if args.page_size == "1" else PAGE_SIZE.parse(args.page_size)
    if "page" in grid and args.page_size != "1":
        raise UsageError("--sweep page= sets the page size: drop --page-size")
    if "host" in grid and args.host_size is not None:
        raise UsageError("--sweep host= sets the host size: drop --host-size")
    _check_hosts(grid, options["pool_size"], page_size)
    engine = engine_for(grid, args.engine)
    specs = load_trace_option(args, args.model) if args.trace else None
    name = args.trace if args.trace else args.workload
    points = run_grid(grid, policies, specs=specs, workload=None if specs else name, engine=engine,
                      page_size=page_size, eviction_policy=args.eviction_policy.split(",")[0].strip(),
                      model=args.model, **later_options(args), **options)
    header = {"workload": name, "engine": engine, "sweep": grid, "policies": policies}
    if args.json:
        print(charts.grid_json(header, points))
    else:
        charts.print_grid(f"{name}: seed {options['seed']}, engine {engine}", points)
    if getattr(args, "figure", None):
        print(charts.save_figure(args.figure, points), file=sys.stderr if args.json else sys.stdout)
    return 0
