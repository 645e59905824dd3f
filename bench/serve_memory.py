"""What a served session's app takes, in address space (what the budget counts: RLIMIT_AS)
and resident memory, at each route a tab may push to its bound, for a memory budget
(``serve --memory-mb``). Prints JSON. How the default budget was chosen (issue 53).

    python bench/serve_memory.py [--memory-mb 2560] [--memory-mb 1024 ...]

One tab each: the home screen; the sandbox (torch loaded); the host tier at the largest host
pool the budget allows; then its history filled to the session's operations (the longest
keys a typed line holds); the scheduler screen at its most requests on the largest pool. Each
figure is the app's peak so far (VmPeak, VmHWM), and whether it is still running.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve_load as load  # noqa: E402 - the bench's own helpers, beside this file

from radixviz.settings import APP_POOL_SLOTS, session_caps  # noqa: E402

WAIT = 60


def peaks(pid: int) -> dict:
    """The app's peak address space and resident memory in MiB (and whether it runs)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {"running": False}
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {"running": True, "address_space_peak_mb": int(fields["VmPeak"].split()[0]) >> 10,
            "resident_peak_mb": int(fields["VmHWM"].split()[0]) >> 10}


def inserts(rng, caps) -> str:
    """The most operations a typed line holds: inserts, each key as long as the line allows,
    each followed by an eviction that makes room for the next (the pool has 128 slots)."""
    size = min(caps.key_tokens, 120, caps.line_chars // (caps.ops_per_line // 2) - 24)
    return "; ".join('insert "' + "".join(rng.choice("abcdefgh") for _ in range(size)) + '"; evict 128'
                     for _ in range(caps.ops_per_line // 2))


async def line(tab: load.Session, text: str) -> str | None:
    """Type ``text`` and enter: None once applied (the line emptied), or the refusal drawn."""
    await asyncio.sleep(len(text) / 380)        # a session takes 400 keystrokes a second past a burst
    mark = len(tab.chunks)
    await tab.keys(text + "\r")
    for _ in range(WAIT * 10):
        seen = " ".join(load.screen_text(tab.chunks[mark:]).split())
        if 'operation, e.g. insert "Hello"' in seen:
            return None
        refused = re.search(r"✗ ([^▎▊│]*)", seen)
        if refused:
            return refused.group(1).strip()
        await asyncio.sleep(0.1)
    raise TimeoutError(f"no answer to a line: {seen[-300:]}")


async def sandbox(base: str, proc, name: str) -> tuple[load.Session, int]:
    """A new student's tab in the sandbox: (the tab, its app's pid)."""
    tab = load.Session(base, name)
    await tab.open(width=120, height=40)
    await tab.wait_for(load.HOME_MARK, WAIT)
    [app] = load.children(proc.pid)
    await tab.keys("s")
    await tab.wait_for("no steps yet", WAIT)
    await tab.keys(":")
    await asyncio.sleep(0.5)
    return tab, app


async def closed(tab: load.Session, proc) -> None:
    """Close the tab; wait until its app has ended and the server has freed its place."""
    await tab.close()
    while load.children(proc.pid):
        await asyncio.sleep(0.2)
    await asyncio.sleep(3)


async def budget(memory_mb: int) -> dict:
    caps = session_caps(memory_mb)
    folder = tempfile.mkdtemp(prefix="radixviz-bench-class-")      # a class of its own
    proc, base = load.start_server(1, "--memory-mb", str(memory_mb), "--class-dir", folder)
    report: dict = {"memory_mb": memory_mb, "caps": {k: getattr(caps, k) for k in (
        "kv_slots", "history_mb", "ops_per_session", "frames", "sim_requests")}}
    rng = random.Random(0)
    try:
        # the largest host pool the budget allows, and a line of inserts on it
        tab, app = await sandbox(base, proc, "host")
        report["sandbox"] = peaks(app)
        refused = await line(tab, f"engine hicache; host-size {caps.kv_slots - 128}; "
                                  + "; ".join(f'insert "{n}{"ab" * 50}"; evict 128' for n in range(5)))
        report["largest_host_pool"] = {**peaks(app), "refused": refused}
        await closed(tab, proc)
        # the history filled to the session's operations (or its steps), the longest keys a line holds
        tab, app = await sandbox(base, proc, "history")
        done, refused = 0, None
        while done + caps.ops_per_line <= caps.ops_per_session and refused is None:
            refused = await line(tab, inserts(rng, caps))
            done += 0 if refused else caps.ops_per_line
        report["history_full"] = {**peaks(app), "operations": done, "refused": refused}
        await closed(tab, proc)
        # the scheduler at its most requests, on the largest pool
        tab = load.Session(base, "scheduler")
        await tab.open(width=120, height=40)
        await tab.wait_for(load.HOME_MARK, WAIT)
        [app] = load.children(proc.pid)
        await tab.keys("w")
        await tab.wait_for("Simulate the scheduler", WAIT)
        for keys in ("\t", "\t", "\t", "\x01", "\x0b", str(caps.sim_requests), "\t", "\x01", "\x0b",
                     str(APP_POOL_SLOTS.high), "\r"):
            await tab.keys(keys)
            await asyncio.sleep(0.3)
        await asyncio.sleep(30)             # the run computes every batch
        shown = " ".join(tab.text()[-4000:].split())
        report["scheduler_most"] = {**peaks(app), "ran": "batch 1/" in shown or "Batch 1" in shown,
                                    "refused": (re.findall(r"✗ ([^▎▊│]*)", shown) or [None])[-1]}
        await tab.close()
    finally:
        load.stop_server(proc)
        shutil.rmtree(folder, ignore_errors=True)
    return report


async def main_async(budgets: list[int]) -> dict:
    return {"load_average": load.load_average(), "budgets": [await budget(mb) for mb in budgets]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-mb", type=int, action="append", default=[])
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(main_async(args.memory_mb or [2560])), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
