"""The toy window engine in the scheduler loop (tests/toy_window.py names this module in its
spec: ``sim="toy_window_sim"``): at the start of every forward pass it slides, as a script's
``slide`` does, so the tree never keeps more than ``window`` tokens of any prompt that no
running request holds. The report counts what the slides dropped (``simulate --json``:
``stats.engine_totals``; the text report: a row of the table); the shared ``Simulation``
runs it (no ``SIMULATION`` here).
"""
from __future__ import annotations

from radixviz.sim.engines import LoopHooks

SLID = "tokens slid out"      # the report's row: tokens the slides took out of the tree
SLIDES = "slides that dropped"  # and how many of the rounds' slides dropped any


class WindowHooks(LoopHooks):
    """Slide every round; count the tokens dropped and the slides that dropped some."""

    def __init__(self, scheduler):
        super().__init__(scheduler)
        self.slid, self.slides = 0, 0

    def start_round(self) -> None:
        # the requests that finished last pass were inserted then: this round trims them,
        # while the running requests' locks keep their paths whole
        dropped = self.scheduler.engine.slide()
        self.slid += dropped
        self.slides += dropped > 0

    def finish(self, stats) -> None:
        stats.engine_totals.update({SLID: self.slid, SLIDES: self.slides})


HOOKS = WindowHooks
