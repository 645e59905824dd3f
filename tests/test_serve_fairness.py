"""What keeps one served tab from taking the machine from the others: its keystrokes pass
at a bounded rate, and a session that keeps a CPU busy is confined to half of the cores
until it calms down (then given every core back)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types

import pytest

from radixviz.classroom.sessions import KEYS_PER_SECOND, MAX_KEYS, KeyBudget
from radixviz.classroom.priority import SessionPriorities


def test_a_paste_passes_whole_and_a_flood_is_cut_to_the_rate(monkeypatch):
    from radixviz.classroom import sessions as serve_classroom
    now = [1000.0]      # the budget's clock, moved by hand: a busy machine's sleeps oversleep
    monkeypatch.setattr(serve_classroom, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    budget = KeyBudget()
    assert budget.take(MAX_KEYS) == MAX_KEYS            # one paste of the biggest message
    assert budget.take(MAX_KEYS) == 0                   # at once again: nothing
    now[0] += 0.5
    assert budget.take(MAX_KEYS) == int(KEYS_PER_SECOND / 2)
    now[0] += 60
    assert budget.take(10 * MAX_KEYS) == MAX_KEYS       # a long pause refills to the burst, no more


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two cores")
def test_a_busy_session_is_confined_and_given_every_core_back_when_it_calms():
    watcher = SessionPriorities(window=2.0)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        watcher.watch(spinner.pid)
        deadline = time.monotonic() + 120   # a hang guard: the window is 2 s
        while spinner.pid not in watcher.confined and time.monotonic() < deadline:
            watcher.check()
            time.sleep(0.2)
        assert os.sched_getaffinity(spinner.pid) == watcher.hog_cores != watcher.all_cores
        os.kill(spinner.pid, signal.SIGSTOP)              # it calms down
        deadline = time.monotonic() + 120   # a hang guard: the window is 2 s
        while spinner.pid in watcher.confined and time.monotonic() < deadline:
            watcher.check()
            time.sleep(0.2)
        assert os.sched_getaffinity(spinner.pid) == watcher.all_cores
    finally:
        spinner.kill()
        spinner.wait()
