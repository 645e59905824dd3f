"""A step as a person meets it: the stepper in a real terminal (tmux, Textual's Linux driver
writing to a pty), → sent by tmux as a key, timed to the frame the app wrote for it. Prints
JSON.

    python bench/terminal_steps.py [--nodes 1000,5000] [--steps 40] [--gap 0.06]

For each tree size a fresh app runs in a tmux window of 120x40 on a session of that many
nodes (bench/tui.py's ``big_session``, so the figures compare with its in-process ones).
The app records when each key reaches it and when each frame has been written, with this
process's CPU time; the benchmark sends → every ``--gap`` seconds (a held key repeats about
every 30-60 ms) and pairs each key with the last frame written before the next one:

- ``cpu``: the app's CPU from the key's arrival to that frame (what the step costs);
- ``wall_from_arrival``: the same in wall time;
- ``wall_from_send``: from just before ``tmux send-keys`` ran to the frame, tmux's own
  process start and the pty included (a terminal emulator would deliver the key sooner).

Needs tmux. Goal (issue 33): a step's CPU p95 under 16 ms at 1,000 and at 5,000 nodes.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZE = (120, 40)


def child(nodes: int, log: Path) -> None:
    """Run the stepper in this terminal on a ``nodes`` session, keeping (kind, monotonic,
    CPU) for each key that arrives and each frame written; write them to ``log`` on SIGUSR1."""
    sys.path.insert(0, str(HERE))
    import tui
    from textual import events
    app = tui.stepper_app(nodes)
    seen: list = []
    display = app._display

    def written(shown, update) -> None:
        display(shown, update)   # the Linux driver writes the frame to the terminal
        if update is not None:
            seen.append(("frame", time.monotonic(), time.process_time()))

    def arrival(driver_process):
        def processed(message) -> None:   # on the driver's input thread, as the key is read
            if isinstance(message, events.Key):
                seen.append(("key", time.monotonic(), time.process_time()))
            driver_process(message)
        return processed

    def dump(*_) -> None:
        log.write_text(json.dumps(seen))
        os._exit(0)   # the tmux window goes with it

    def ready() -> None:
        screen = app.screen
        if getattr(screen, "model", None) is None or any(w.is_running for w in app.workers):
            app.set_timer(0.1, ready)
            return
        screen.position = 0
        driver = app._driver
        driver.process_message = arrival(driver.process_message)
        seen.clear()
        log.with_suffix(".ready").write_text(str(os.getpid()))

    app._display = written
    signal.signal(signal.SIGUSR1, dump)
    app.call_later(lambda: app.set_timer(0.1, ready))
    app.run()


def tmux(session: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", session, *args], capture_output=True, text=True).stdout


def run(nodes: int, steps: int, gap: float) -> dict:
    session = f"terminal-steps-{os.getpid()}"
    log = Path(tempfile.mkdtemp(prefix="terminal-steps-")) / "seen.json"
    command = f"{sys.executable} {Path(__file__).resolve()} --child --nodes {nodes} --log {log}"
    tmux(session, "new-session", "-d", "-s", session, "-x", str(SIZE[0]), "-y", str(SIZE[1]), command)
    ready = log.with_suffix(".ready")
    try:
        for _ in range(3000):   # building a 5,000-node session and loading torch: seconds
            if ready.exists():
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"the app did not get ready: {tmux(session, 'capture-pane', '-p')}")
        time.sleep(0.5)
        sent = []
        for _ in range(steps):
            sent.append(time.monotonic())
            tmux(session, "send-keys", "-t", session, "Right")
            time.sleep(gap)
        time.sleep(0.3)
        os.kill(int(ready.read_text()), signal.SIGUSR1)
        for _ in range(100):
            if log.exists():
                break
            time.sleep(0.05)
        seen = json.loads(log.read_text())
    finally:
        tmux(session, "kill-server")
    return _paired(nodes, sent, seen)


def _paired(nodes: int, sent: list, seen: list) -> dict:
    keys = [(m, c) for kind, m, c in seen if kind == "key"]
    frames = [(m, c) for kind, m, c in seen if kind == "frame"]
    cpu, arrival, send = [], [], []
    for index, (key_at, key_cpu) in enumerate(keys[:len(sent)]):
        until = keys[index + 1][0] if index + 1 < len(keys) else float("inf")
        caused = [f for f in frames if key_at <= f[0] < until]
        if not caused:
            continue
        frame_at, frame_cpu = caused[-1]
        cpu.append((frame_cpu - key_cpu) * 1000)
        arrival.append((frame_at - key_at) * 1000)
        send.append((frame_at - sent[index]) * 1000)
    return {"tree_nodes_asked": nodes, "terminal": f"{SIZE[0]}x{SIZE[1]}", "keys_sent": len(sent),
            "keys_arrived": len(keys), "steps_timed": len(cpu),
            **_stats("cpu", cpu), **_stats("wall_from_arrival", arrival), **_stats("wall_from_send", send)}


def _stats(name: str, values: list) -> dict:
    values = sorted(values)
    if not values:
        return {}
    return {f"{name}_p50_ms": round(statistics.median(values), 2),
            f"{name}_p95_ms": round(values[int(0.95 * (len(values) - 1))], 2),
            f"{name}_max_ms": round(values[-1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="1000,5000", help="tree sizes, comma-separated")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--gap", type=float, default=0.06, help="seconds between keys")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--log", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.nodes), args.log)
        return
    result: dict = {"load_average": os.getloadavg()}
    result["trees"] = [run(int(n), args.steps, args.gap) for n in args.nodes.split(",")]
    result["load_average_after"] = os.getloadavg()
    result["goals"] = {"cpu_p95_ms": 16.0, "at_nodes": [1000, 5000]}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
