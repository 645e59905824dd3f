"""First paint as a person sees it: each command a person types, started in a real terminal
(tmux), timed from Enter until the screen shows text; then until it is ready to use (the
engine loaded). ``serve``: the page fetched over HTTP, then its websocket, until the home
screen is drawn. Prints JSON.

    python bench/first_paint.py [--rounds 3] [--only sandbox,lesson]

Each command waits in a shell reading a line, so tmux's own start is not counted; the clock
starts when the line is sent. For the stepper's entry points it also times its panes shown
while the engine still loads (``panes_s``: the pool's title on screen beside the loading
line), and for ``sandbox`` an operation typed as soon as the first text shows
(``typed_op_done_s``: the status line counts it, after the engine has loaded and run it).
Needs tmux (and aiohttp, a dependency of textual-serve, for ``serve``). Goals (issue 33):
first text within 0.8 s for every entry point, the stepper's panes within 1 s (torch still
loading); start.sh (already installed) under 2 s.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RADIXVIZ = str(Path(sys.executable).with_name("radixviz"))
SESSION = f"first-paint-{os.getpid()}"
SIZE = (120, 40)

# name: (command, text on the screen once it is ready to use)
# the stepper's panes drawn before the engine is there: both on screen at once
PANES_MARKS = ("KV pool", "loading the engine")
TYPED = (":", 'insert "zq"', "Enter")   # typed at the first text
TYPED_DONE = "op 1/1"   # the status line once the typed operation has run
ENTRY_POINTS = {
    "home": ([RADIXVIZ], "Sandbox: an empty cache"),
    "sandbox": ([RADIXVIZ, "sandbox"], "no steps yet"),
    # "page 1 of" since the lesson walk; "block 1 of" in the releases before it (--baseline runs)
    "lesson 1": ([RADIXVIZ, "lesson", "1"], ("page 1 of", "block 1 of")),
    "challenge evict-short": ([RADIXVIZ, "challenge", "evict-short"], "Hints:"),
    "simulate --app": ([RADIXVIZ, "simulate", "--app"], "batch 1/"),
    "start.sh (installed)": (["bash", str(ROOT / "scripts" / "start.sh")], "Sandbox: an empty cache"),
}


def tmux(*args: str) -> str:
    # a tmux server of its own (-L): others' sessions are left alone, and a session kept
    # open beside the measured one keeps the server from exiting between commands
    return subprocess.run(["tmux", "-L", SESSION, *args], capture_output=True, text=True).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def time_in_terminal(command: list[str], ready_mark: str | tuple, timeout: float = 60.0,
                     type_ahead: bool = False) -> dict:
    """Seconds from Enter to the first text on screen, to the stepper's panes shown while the
    engine loads (None if they never are), and to ``ready_mark`` (or any of a tuple of them).
    ``type_ahead``: type an operation at the first text, and time until it has run."""
    marks = (ready_mark,) if isinstance(ready_mark, str) else ready_mark
    line = shlex.join(command)
    # the command may print and exit (challenge): keep the pane for the capture
    # tmux starts commands in its server's environment: pass on what this one sets
    env = [arg for name in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE") if name in os.environ
           for arg in ("-e", f"{name}={os.environ[name]}")]
    tmux("new-session", "-d", "-s", SESSION, "-x", str(SIZE[0]), "-y", str(SIZE[1]), *env,
         f"sh -c 'read _; {line}; sleep 30'")
    try:
        for _ in range(500):
            if tmux("list-panes", "-t", SESSION, "-F", "#{pane_pid}").strip():
                break
            time.sleep(0.01)
        else:
            raise RuntimeError(f"tmux did not start {line}")
        time.sleep(0.2)   # the shell is waiting at read
        start = time.perf_counter()
        tmux("send-keys", "-t", SESSION, "Enter")
        first = ready = panes = typed = None
        while time.perf_counter() - start < timeout:
            text = screen()
            now = time.perf_counter() - start
            if first is None and text.strip():
                first = now
                if type_ahead:
                    for keys in TYPED:
                        tmux("send-keys", "-t", SESSION, *(["-l", keys] if keys != "Enter" else [keys]))
            if panes is None and all(mark in text for mark in PANES_MARKS):
                panes = now
            if ready is None and any(mark in text for mark in marks):
                ready = now
            if type_ahead and TYPED_DONE in text:
                typed = now
            if ready is not None and (typed is not None or not type_ahead):
                break
            time.sleep(0.005)
        result = {"first_paint_s": first, "panes_s": panes, "ready_s": ready}
        if type_ahead:
            result["typed_op_done_s"] = typed
        return result
    finally:
        tmux("kill-session", "-t", SESSION)


async def serve_first_page(timeout: float = 60.0) -> dict:
    """``radixviz serve``: seconds to fetch the first page (the form asking a student's name),
    and from joining until the home screen is drawn over the page's websocket (the server
    already listening)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from serve_load import HOME_MARK, Session, start_server, stop_server

    proc, url = start_server(2, "--device", "cpu")
    tab = Session(url)
    try:
        start = time.perf_counter()
        async with tab.http.get(url + "/") as response:
            await response.text()
        page = time.perf_counter() - start
        start = time.perf_counter()
        await tab.open()
        while HOME_MARK not in tab.text():
            if time.perf_counter() - start > timeout:
                raise TimeoutError(f"{HOME_MARK!r} not drawn within {timeout} s")
            await asyncio.sleep(0.005)
        return {"page_s": page, "first_paint_s": time.perf_counter() - start}
    finally:
        await tab.close()
        stop_server(proc)


def summary(runs: list[dict]) -> dict:
    out = {"runs": runs}
    for key in runs[0]:
        values = [r[key] for r in runs if r[key] is not None]
        if values:
            out[f"{key.removesuffix('_s')}_median_s"] = round(statistics.median(values), 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated names (default: all)")
    args = parser.parse_args()
    names = [n for n in [*ENTRY_POINTS, "serve"] if not args.only or n in args.only.split(",")]
    tmux("new-session", "-d", "-s", "keep", "sleep 3600")
    try:
        print(json.dumps(measure(names, args.rounds), indent=2))
    finally:
        tmux("kill-server")


def measure(names: list[str], rounds: int) -> dict:
    result = {"load_average": os.getloadavg(), "terminal": f"tmux {SIZE[0]}x{SIZE[1]}"}
    for name in names:
        runs = []
        for _ in range(rounds):
            if name == "serve":
                runs.append(asyncio.run(serve_first_page()))
            else:
                runs.append(time_in_terminal(*ENTRY_POINTS[name], type_ahead=name == "sandbox"))
        result[name] = summary([{k: (round(v, 3) if v is not None else None) for k, v in r.items()}
                                for r in runs])
    firsts = [result[n]["first_paint_median_s"] for n in names if "first_paint_median_s" in result[n]]
    result["goal_first_paint_s"] = 0.8
    result["goal_met"] = bool(firsts) and max(firsts) <= 0.8
    panes = [result[n]["panes_median_s"] for n in names if "panes_median_s" in result[n]]
    result["goal_panes_s"] = 1.0   # the stepper's panes, torch still loading
    result["panes_goal_met"] = bool(panes) and max(panes) <= 1.0
    result["load_average_after"] = os.getloadavg()
    return result


if __name__ == "__main__":
    main()
