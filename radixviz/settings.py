"""The numbers and names a person types, checked in one place with one set of limits.

The command line (argparse ``type=`` callables built from ``Limit.arg``) and the app's
scheduler form (``check_settings``) both read this table, so ``radixviz simulate --app`` and
the form refuse the same values with the same words. No UI and no torch here: the form, the
commands and ``script`` sessions all import it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import os
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
    bench/serve_load.py: 30 tabs at these bounds). The memory ones are derived from the
    class's memory budget per session (``session_caps``)."""
    line_chars: int = 2_000          # one typed line
    ops_per_line: int = 20
    ops_per_session: int = 400       # operations a sandbox keeps (a script's size)
    frames: int = 12_000             # micro-steps a sandbox keeps (each a tree snapshot)
    key_tokens: int = 256            # tokens in one key
    export_frames: int = 300         # steps in one "export all" download
    columns: int = 300               # the terminal a tab may ask for
    rows: int = 100
    memory_mb: int = 2560            # the budget the numbers below come from (SESSION_MB)
    kv_slots: int = 360_448          # device and host KV slots together (host-size, a form's pool)
    history_mb: int = 400            # a sandbox's history of frames
    sim_requests: int = 500          # the scheduler screen's requests
    script_bytes: int = 100_000      # an uploaded script
    # a file delivered to the browser (a save, an export) waits in the app, and on the server,
    # until the browser fetches it: at most this many at once, for at most this long
    deliveries: int = 4
    delivery_seconds: float = 60.0

    def host_refusal(self, host_size: int | None, pool_size: int = 128) -> str | None:
        """Why a host pool of ``host_size`` slots beside ``pool_size`` device slots is past
        this session's memory, or None."""
        if host_size is not None and host_size + pool_size > self.kv_slots:
            return (f"host size {host_size}: a session of this class holds at most "
                    f"{self.kv_slots - pool_size:,} host slots (its memory budget is {self.memory_mb:,} MB)")
        return None

    def sim_refusal(self, requests: int, pool_size: int, host_size: int | None = None) -> str | None:
        """Why the scheduler screen may not run ``requests`` on these pools here, or None."""
        if requests > self.sim_requests:
            return (f"requests {requests}: the scheduler here keeps at most {self.sim_requests} "
                    f"(a session's memory budget is {self.memory_mb:,} MB)")
        if pool_size > self.kv_slots:
            return f"pool size {pool_size}: a session here holds at most {self.kv_slots:,} slots"
        return self.host_refusal(host_size, pool_size)


# A session's memory budget in MiB of address space (``serve --memory-mb``), enforced by the
# OS on each app (RLIMIT_AS). What a served app takes before any cache, measured with
# bench/serve_memory.py (torch loaded, one thread, a sandbox open): 735 MiB of address space.
DEFAULT_SESSION_MB = 2560
SESSION_MB = Limit("memory", 1024, 1 << 20, default=DEFAULT_SESSION_MB)
SESSION_ENV = "RADIXVIZ_SESSION_MB"      # the budget, passed to each app
APP_BASE_MB = 800                         # the measured 735, with room for a screen's widgets
SLOT_BYTES = 1024                         # one KV slot, device or host: 516 bytes of K, V and state
                                          # (2 layers, 2 heads of 16 floats), doubled for a step's copies
# of what is left past the base: the pools, the history of frames, the scheduler screen's batches;
# the rest (15 %) is the room a step needs while it draws
KV_SHARE, HISTORY_SHARE, SIM_SHARE = 0.2, 0.35, 0.3
SIM_FULL_MB = 512                         # the scheduler screen's 500 requests on 8,192 slots


def session_caps(memory_mb: int = DEFAULT_SESSION_MB) -> SessionCaps:
    """The bounds of a served session with ``memory_mb`` MiB: each memory-bound number in
    proportion to its share of what the app's base leaves."""
    spare = memory_mb - APP_BASE_MB
    history = int(min(HISTORY_MB.default or 400, spare * HISTORY_SHARE))
    ops = max(50, min(400, history))        # a script's operations, and their frames, follow its history
    return SessionCaps(ops_per_session=ops, frames=30 * ops, memory_mb=memory_mb,
                       kv_slots=int(spare * KV_SHARE * (1 << 20)) // SLOT_BYTES, history_mb=history,
                       sim_requests=max(10, min(APP_REQUESTS.high, int(APP_REQUESTS.high * spare * SIM_SHARE
                                                                           / SIM_FULL_MB))),
                       script_bytes=250 * ops)


def served_caps() -> SessionCaps:
    """This served app's bounds, from the budget its server passed (``SESSION_ENV``)."""
    try:
        return session_caps(SESSION_MB.parse(os.environ.get(SESSION_ENV, SESSION_MB.default)))
    except ValueError:
        return SERVED_CAPS


SERVED_CAPS = session_caps()
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
