"""The toy window engine in the scheduler loop (tests/toy_window.py names this module in its
spec: ``sim="toy_window_sim"``): every insert the loop makes copies the path's last
``window`` tokens into the window pool, which evicts its oldest unlocked copies on its own
when full. The report counts both (``simulate --json``: ``stats.engine_totals``; the text
report: a row of the table); the shared ``Simulation`` runs it (no ``SIMULATION`` here).
"""
from __future__ import annotations

from radixviz.sim.engines import LoopHooks

COPIED = "window copies made"       # the report's rows
TOMBSTONED = "window copies evicted"


class WindowHooks(LoopHooks):
    """Read the window pool's counts off the engine when the run ends."""

    def finish(self, stats) -> None:
        cache = self.scheduler.engine.cache
        stats.engine_totals.update({COPIED: cache.copies, TOMBSTONED: cache.tombstones})


HOOKS = WindowHooks
