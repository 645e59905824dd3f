"""The numbers and names a person types, checked in one place with one set of limits.

The command line (argparse ``type=`` callables built from ``Limit.arg``) and the app's
scheduler form (``check_settings``) both read this table, so ``radixviz simulate --app`` and
the form refuse the same values with the same words. No UI and no torch here: the form, the
commands and ``script`` sessions all import it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import re
from dataclasses import dataclass

# the limits an engine's options use live one layer down; they are re-exported here
from radixviz.limits import HOST_SLOTS as HOST_SLOTS, PAGE_SIZE as PAGE_SIZE, Limit, arg_type
from radixviz.errors import excerpt
from radixviz.sim import defaults as D
from radixviz.sim.policies import POLICIES
from radixviz.sim.workloads import WORKLOADS

if TYPE_CHECKING:
    from collections.abc import Collection


# A session's KV pool (sandbox, home, run, export, verify-kv): every slot is a tensor row.
POOL_SLOTS = Limit("pool size", 1, 1_000_000, default=128)
# How much of a session's history (its frames) is kept, in MiB (estimated): past it the
# oldest steps are dropped (script/frame_history.py). With torch, Textual and a 5,000-node
# tree's 50,000 steps (about 120 MiB of frames) a sandbox stays under 1 GB (bench/memory.py).
HISTORY_MB = Limit("history", 1, 1_000_000, default=400)
SEED = Limit("seed", 0, 2**63 - 1, default=D.SEED)
QUIZ_QUESTIONS = Limit("count", 1, 100, default=6)
EDGE_LABEL = Limit("max edge", 8, 10_000, default=24)    # shorter cannot show "ab…yz" readably
WIDTH = Limit("width", 20, 10_000)
PORT = Limit("port", 0, 65535, default=8000)
MAX_SESSIONS = Limit("max sessions", 1, 1000, default=30)   # one app process per session

# ``radixviz simulate``: one pass over the requests, only totals are kept. The defaults
# (sim/defaults.py) are the scheduler screen's, so a run gives the same numbers anywhere.
SIM_REQUESTS = Limit("requests", 1, D.MAX_REQUESTS, default=D.REQUESTS)
SIM_POOL_SLOTS = Limit("pool size", 16, 1 << 22, default=D.POOL_SIZE)
MAX_RUNNING = Limit("max running", 1, 4096, default=D.MAX_RUNNING)
CONTEXT_LEN = Limit("context length", 16, 1 << 17)

# The app's scheduler screen (its form and ``simulate --app``) keeps every batch (tree
# snapshot and pool counts) to step back through, so its caps are lower than the command's:
# 500 requests on 8192 slots is about 0.5 GB.
APP_REQUESTS = Limit("requests", 1, 500, default=D.REQUESTS)
APP_POOL_SLOTS = Limit("pool size", 16, 8192, default=D.POOL_SIZE)
APP_SIM_LIMITS = {"seed": SEED, "requests": APP_REQUESTS, "pool_size": APP_POOL_SLOTS}


@dataclass(frozen=True)
class SessionCaps:
    """What one served session may do (``radixviz serve``): a tab is anyone on the network,
    so each bound below keeps one tab from taking the machine from the others (measured by
    bench/serve_load.py: 30 tabs at these bounds)."""
    line_chars: int = 2_000          # one typed line
    ops_per_line: int = 20
    ops_per_session: int = 400       # operations a sandbox keeps
    frames: int = 12_000             # micro-steps a sandbox keeps (each a tree snapshot)
    key_tokens: int = 256            # tokens in one key
    export_frames: int = 300         # steps in one "export all" download
    columns: int = 300               # the terminal a tab may ask for
    rows: int = 100


SERVED_CAPS = SessionCaps()
SERVED_ENV = "RADIXVIZ_SERVED"   # set to 1 by ``radixviz serve`` for each session it starts


_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


def check_device(device: str) -> str:
    """``device`` when the pool would accept it; ValueError otherwise. Refused here, before
    an app opens, it is one line instead of a crash in the app's loading worker."""
    if not _DEVICE.fullmatch(device):
        raise ValueError(f"{excerpt(device)[1:-1]}: use auto, cpu or cuda")
    if device.startswith("cuda"):
        # torch only for an explicit cuda, to ask whether that GPU is there
        from radixviz.cache import resolve_device
        try:
            resolve_device(device)
        except ValueError as exc:
            raise ValueError(f"{excerpt(device)[1:-1]}: {exc}") from None
    return device


DEVICE_ARG = arg_type(check_device)


def check_choice(label: str, value: str, choices: Collection[str]) -> str:
    """``value`` when it is one of ``choices``; ValueError naming them otherwise."""
    if value not in choices:
        raise ValueError(f"{label}: choose from {', '.join(choices)}")
    return value


@dataclass(frozen=True)
class SimSettings:
    """What the scheduler screen runs: the form's fields, already checked."""
    workload: str = D.WORKLOAD     # the same defaults as ``radixviz simulate``
    policy: str = D.POLICY
    seed: int = D.SEED             # the defaults of SEED, APP_REQUESTS and APP_POOL_SLOTS
    requests: int = D.REQUESTS
    pool_size: int = D.POOL_SIZE


def check_settings(workload: str, policy: str, seed, requests, pool_size) -> tuple:
    """(SimSettings, None) or (None, one-line error), with the scheduler screen's limits.
    Numbers may come as text (the form's fields)."""
    try:
        check_choice("workload", workload, WORKLOADS)
        check_choice("policy", policy, POLICIES)
        raw = {"seed": seed, "requests": requests, "pool_size": pool_size}
        numbers = {name: limit.check(raw[name]) for name, limit in APP_SIM_LIMITS.items()}
    except ValueError as exc:
        return None, str(exc)
    return SimSettings(workload, policy, **numbers), None
