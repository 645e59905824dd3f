"""How the serve tests count a server's processes (bench/serve_load.py), on a real process
tree stepped by hand: a stand-in server whose stand-in keeper holds one app (``sleep``).

A keeper that ends goes through three states: alive without its app, a zombie (ended, not
yet reaped by the server: its command line reads empty), reaped. ``children()`` once took
the zombie for an app of its own (it is no keeper by its command line), so a test that saw
no app could see one again a moment later: the start-deadline test failed that way in CI
(test_serve_start_failure, seed 77041100: one pid "left" that was the keeper's zombie).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from serve_helpers import load

# the keeper: starts its app, says its pid, reaps it when it dies, ends when told (stdin closed)
KEEPER = ("import subprocess, sys, threading\n"
          "app = subprocess.Popen(['sleep', '600'])\n"
          "print(app.pid, flush=True)\n"
          "threading.Thread(target=app.wait, daemon=True).start()\n"
          "sys.stdin.read()\n")
# the server: starts the keeper (named as keepers are), ends it and reaps it when told
SERVER = ("import subprocess, sys\n"
          f"keeper = subprocess.Popen([sys.executable, '-c', {KEEPER!r}, 'radixviz.classroom.keeper'],"
          " stdin=subprocess.PIPE)\n"
          "for line in sys.stdin:\n"
          "    if line == 'end\\n': keeper.stdin.close()\n"
          "    if line == 'reap\\n': keeper.wait()\n")


def until(done, what: str) -> None:
    """Wait for ``done()`` (a hang guard of 60 s)."""
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_an_ending_keeper_is_never_counted_as_an_app_and_is_held_until_reaped():
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        app = int(server.stdout.readline())
        [keeper] = load.direct_children(server.pid)
        until(lambda: load.children(server.pid) == [app], "the app is not seen under its keeper")
        seen = {"app running": (load.children(server.pid), load.under(server.pid))}

        os.kill(app, signal.SIGKILL)                         # the keeper reaps it, and goes on
        until(lambda: state(app) == "gone", "the keeper did not reap its app")
        seen["keeper without its app"] = (load.children(server.pid), load.under(server.pid))

        server.stdin.write("end\n")                          # the keeper ends; the server does not reap it yet
        server.stdin.flush()
        until(lambda: state(keeper) == "Z", "the keeper did not end")
        seen["keeper a zombie"] = (load.children(server.pid), load.under(server.pid))

        server.stdin.write("reap\n")
        server.stdin.flush()
        until(lambda: state(keeper) == "gone", "the server did not reap its keeper")
        seen["keeper reaped"] = (load.children(server.pid), load.under(server.pid))
    finally:
        server.kill()
        server.wait()
    assert seen == {
        "app running": ([app], [keeper, app]),
        "keeper without its app": ([], [keeper]),
        "keeper a zombie": ([], [keeper]),          # children() once said [keeper] here
        "keeper reaped": ([], []),
    }
