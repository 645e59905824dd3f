"""The first release's cache (engine 2024) in the loop that was written for it.

The 2024 loop needs no hook for its own cache (``LoopHooks`` changes nothing); what this
module adds is what the loop's views and ``simulate`` know of it: a status line need not name
the cache beside the loop, and the release's insert (bug #4, ``simulate --insert release``)
is this cache's to run, and it may be keyed by a trace's blocks (sim/unit_engine.py).
"""
from __future__ import annotations

from radixviz.sim.engines import LoopHooks


class ReleaseHooks(LoopHooks):
    """The first release's cache: the loop's own."""

    loop_own_cache = True
    runs_release_insert = True
    block_units = True


HOOKS = ReleaseHooks
