"""The comb: what a step costs on a path n levels deep (issue 52).

A comb is a chain of n nodes each with a second child (``insert "a…aX"`` for every length:
a conversation that branches at every turn). Every micro-step is recorded as a frame, as the
sandbox and ``radixviz run`` record them.

- ``deep_insert``: a comb of n levels is built untraced (its inserts in the order that walks
  one level each), then ``insert "a…aY"`` (n a's) is applied through a Session, recorded:
  its ~2n micro-steps walk the whole path. A step that costs what it changes makes this
  insert cost n: the exponent of its time over n (``exponent``) is about 1; a step that
  copies its path makes it n², exponent 2 (issue 52 measured the whole script at n^2.6).
- ``script``: with ``--script``, the whole comb script of n inserts (shortest first, as the
  issue wrote it) through a Session: n²/2 micro-steps however cheap each is, so its exponent
  is 2 at best; its time and peak memory are what a person waits for.

    python bench/comb.py [--levels 100,200,400,800,1600,3200] [--script 100,200,400] [--repeat 3]

Prints one JSON document: per n the median seconds, the steps recorded, microseconds a step,
and the exponents fitted on log time over log n (least squares). ``calibration_s`` is the time
of a fixed pure-Python loop in the same process, to read figures taken at different loads.
Times are the process's CPU seconds (time.process_time): on a shared machine the wall clock
also counts the others' work.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from radixviz.script import Session  # noqa: E402
from radixviz.script.frame_history import FrameHistory  # noqa: E402
from radixviz.script.parser import parse_script  # noqa: E402


def calibration() -> float:
    start, total = time.perf_counter(), 0
    for i in range(2_000_000):
        total += i
    return time.perf_counter() - start


def comb_session(levels: int) -> Session:
    """A session holding a comb ``levels`` deep, built without recording its steps."""
    session = Session(pool_size=3 * levels + 64, device="cpu", history_mb=None)
    session.engine.observer = None
    # longest first: each insert splits the top edge, a walk of one level (n inserts, not n²/2)
    for op in parse_script("\n".join(f'insert "{"a" * k}X"' for k in range(levels, 0, -1))):
        session.apply(op)
    session.engine.observer = session._on_event
    # the build's own frames (their long edges' slots) are not part of what is measured
    session.frames = FrameHistory(None)
    session.records.clear()
    gc.collect()
    return session


def deep_insert(levels: int) -> tuple[float, int]:
    session = comb_session(levels)
    (op,) = parse_script(f'insert "{"a" * levels}Y"')
    before = len(session.frames)
    start = time.process_time()
    session.apply(op)
    return time.process_time() - start, len(session.frames) - before


def whole_script(levels: int) -> tuple[float, int]:
    session = Session(pool_size=3 * levels + 64, device="cpu")
    ops = parse_script("\n".join(f'insert "{"a" * k}X"' for k in range(1, levels + 1)))
    start = time.process_time()
    for op in ops:
        session.apply(op)
    return time.process_time() - start, session.frames.dropped + len(session.frames)


def exponent(points: list[tuple[int, float]]) -> float | None:
    """The slope of log seconds over log n, least squares."""
    if len(points) < 2:
        return None
    xs, ys = [math.log(n) for n, _ in points], [math.log(t) for _, t in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs), 3)


def curve(measure, sizes: list[int], repeat: int) -> dict:
    rows, points = [], []
    for n in sizes:
        runs = [measure(n) for _ in range(repeat)]
        seconds = statistics.median(t for t, _ in runs)
        steps = runs[0][1]
        rows.append({"n": n, "seconds": round(seconds, 4), "steps": steps,
                     "us_per_step": round(seconds / max(steps, 1) * 1e6, 2)})
        points.append((n, seconds))
    return {"curve": rows, "exponent": exponent(points)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="100,200,400,800,1600,3200")
    parser.add_argument("--script", default="", help="comb script sizes to run whole, e.g. 100,200,400")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sys.setrecursionlimit(1000)   # what a person's Python has: a walk that recurses fails here
    out: dict = {"calibration_s": round(calibration(), 3)}
    out["deep_insert"] = curve(deep_insert, [int(n) for n in args.levels.split(",") if n], args.repeat)
    if args.script:
        out["script"] = curve(whole_script, [int(n) for n in args.script.split(",")], 1)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out["load"] = os.getloadavg()[0]
    out["python"] = platform.python_version()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
