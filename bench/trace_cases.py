"""Issue 52's hostile and huge traces, each replayed as a person replays it, against any checkout.

Every case writes its trace (or feeds a FIFO, for the 2 GB line) and runs ``radixviz
simulate --trace`` of the checkout ``--tree`` (its ``.venv``) as a child under a memory cap
(``--cap-mb``, RLIMIT_AS), so a checkout that expands its input first fails instead of
taking the machine. Run it once with a checkout from before the fix and once with this one:

- ``seconds``: until the child exited (killed past ``--limit``: None);
- ``peak_mb``: the child's own peak resident memory (its ``VmHWM``, written at exit or read
  from /proc while it runs), never ``wait4``'s figure;
- ``exit`` and ``said``: the exit code and the last line it wrote to stderr.

    python bench/trace_cases.py --tree PATH [--case NAME ...] [--limit 300] [--cap-mb 4096]

Prints one JSON document.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CHILD = ("import atexit, os, resource, sys\n"
         "cap = int(os.environ['TRACE_CASES_CAP_MB']) * 2**20\n"
         "resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
         "def peak():\n"
         "    with open(os.environ['TRACE_CASES_PEAK'], 'w') as out:\n"
         "        out.write(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n"
         "atexit.register(peak)\n"
         "from radixviz.cli import main\n"
         "main(sys.argv[1:])\n")


def write_lines(path: Path, objects) -> None:
    with open(path, "w") as out:
        for obj in objects:
            out.write(json.dumps(obj, separators=(",", ":")) + "\n")


def giant_request(folder: Path) -> tuple[Path, list]:
    # one 120 KB line: 30,720,000 tokens declared, 60,000 hash ids (block 512)
    path = folder / "giant.jsonl"
    write_lines(path, [{"timestamp": 0, "input_length": 30_720_000, "output_length": 1,
                        "hash_ids": list(range(60_000))}])
    return path, []


def two_gigabyte_line(folder: Path) -> tuple[Path, list]:
    # one line of 2 GB (written to disk: a FIFO is refused as not a regular file)
    path = folder / "one-line.jsonl"
    chunk = b"x" * (1 << 20)
    with open(path, "wb") as out:
        for _ in range(2048):
            out.write(chunk)
        out.write(b"\n")
    return path, []


def all_at_once(folder: Path, requests: int = 1_000_000) -> tuple[Path, list]:
    # every request at time 0: the queue would hold them all
    path = folder / "burst.jsonl"
    write_lines(path, ({"timestamp": 0, "input_length": 1024, "output_length": 2, "hash_ids": [i % 97, i]}
                       for i in range(requests)))
    return path, ["--policy", "fcfs", "--pool-size", "65536", "--context-len", "8192"]


def outpacing(folder: Path, requests: int = 50_000) -> tuple[Path, list]:
    # arrivals every millisecond, each prompt 8 blocks: service cannot keep up
    path = folder / "outpacing.jsonl"
    write_lines(path, ({"timestamp": i, "input_length": 4096, "output_length": 16,
                        "hash_ids": [i % 13, *range(i * 7, i * 7 + 7)]} for i in range(requests)))
    return path, ["--pool-size", "65536", "--context-len", "8192"]


def far_timestamps(folder: Path) -> tuple[Path, list]:
    path = folder / "far.jsonl"
    write_lines(path, [{"timestamp": -1e308, "input_length": 16, "output_length": 1, "hash_ids": [1]},
                       {"timestamp": 1e308, "input_length": 16, "output_length": 1, "hash_ids": [2]}])
    return path, []


CASES = {"giant_request": giant_request, "two_gigabyte_line": two_gigabyte_line,
         "all_at_once_1m": all_at_once, "outpacing_50k": outpacing, "far_timestamps": far_timestamps}


def run_case(tree: Path, make, limit: float, cap_mb: int) -> dict:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        trace, flags = make(folder)
        size = trace.stat().st_size if trace.is_file() else None
        peak_file = folder / "peak"
        env = {**os.environ, "PYTHONPATH": str(tree), "TRACE_CASES_PEAK": str(peak_file),
               "TRACE_CASES_CAP_MB": str(cap_mb)}
        command = [str(tree / ".venv" / "bin" / "python"), "-c", CHILD, "simulate", "--trace", str(trace),
                   "--block-size", "512", "--json", *flags]
        started, polled = time.monotonic(), 0
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                 env=env, cwd=tree)
        err: list = []
        reader = threading.Thread(target=lambda: err.append(child.stderr.read()), daemon=True)
        reader.start()
        while child.poll() is None and time.monotonic() - started < limit:
            try:
                status = Path(f"/proc/{child.pid}/status").read_text()
                polled = max(polled, int(status.split("VmHWM:")[1].split()[0]))
            except (OSError, IndexError):
                pass
            time.sleep(0.05)
        code = child.poll()
        if code is None:
            child.kill()
            child.wait()
        seconds = round(time.monotonic() - started, 2) if code is not None else None
        reader.join(5)
        try:
            kb = int(peak_file.read_text())
        except (OSError, ValueError):
            kb = polled
        lines = [line for line in (err[0] if err else "").splitlines() if line.strip()]
        return {"trace_bytes": size, "seconds": seconds, "exit": code, "peak_mb": round(kb / 1024, 1),
                "said": lines[-1][:300] if lines else "", "stderr_lines": len(lines)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="the checkout to run (with its .venv)")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="a case to run (default: all)")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds a case may take")
    parser.add_argument("--cap-mb", type=int, default=4096, help="the child's address-space cap")
    args = parser.parse_args()
    tree = args.tree.resolve()
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    out: dict = {"tree": commit, "cap_mb": args.cap_mb}
    for name in args.case or list(CASES):
        load = os.getloadavg()[0]
        out[name] = {**run_case(tree, CASES[name], args.limit, args.cap_mb), "load": round(load, 2)}
        print(f"{name}: {out[name]}", file=sys.stderr)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
