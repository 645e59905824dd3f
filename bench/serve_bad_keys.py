"""One address sends the teacher's page a bad key as fast as it may while another student's
page is timed (issue 53). Prints JSON.

    python bench/serve_bad_keys.py [--requests 600] [--concurrency 20]

The flood comes from 127.0.0.1: ``GET /teacher?key=%C3%A9`` (a non-ASCII key, which once made
the server draw a 170-line traceback on its event loop for each); the other student loads
``GET /`` from 127.0.0.2 every 50 ms, first alone (the baseline), then during the flood.
The log's lines are counted too. The flood's size is the request rate's burst for one
address (600 at the default 20 a second), so none of it is turned away with 429.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve_load as load  # noqa: E402 - the bench's own helpers, beside this file

EVERY = 0.05          # seconds between two of the other student's page loads


def spread(values: list[float]) -> dict:
    values = sorted(values)
    return {"n": len(values), "median_ms": round(1000 * statistics.median(values), 1),
            "p95_ms": round(1000 * values[int(0.95 * (len(values) - 1))], 1), "max_ms": round(1000 * values[-1], 1)}


async def student(base: str, stop: asyncio.Event, samples: list) -> None:
    """Another student, from another address, loading the class's page."""
    import aiohttp
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0), force_close=True)
    async with aiohttp.ClientSession(connector=connector) as http:
        while not stop.is_set():
            start = time.monotonic()
            async with http.get(base + "/") as response:
                await response.read()
                assert response.status == 200, response.status
            samples.append(time.monotonic() - start)
            await asyncio.sleep(EVERY)


async def flood(base: str, requests: int, concurrency: int) -> Counter:
    import aiohttp
    statuses: Counter = Counter()
    todo = iter(range(requests))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        async def worker() -> None:
            for _ in todo:
                async with http.get(base + "/teacher?key=%C3%A9") as response:
                    await response.read()
                    statuses[response.status] += 1
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return statuses


async def run(requests: int, concurrency: int) -> dict:
    folder = tempfile.mkdtemp(prefix="radixviz-bench-class-")      # a class of its own
    proc, base = load.start_server(2, "--class-dir", folder)
    lines: list = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        await asyncio.sleep(1)
        stop, alone = asyncio.Event(), []
        timing = asyncio.ensure_future(student(base, stop, alone))
        await asyncio.sleep(4)
        stop.set()
        await timing
        logged_before = len(lines)
        stop, loaded = asyncio.Event(), []
        timing = asyncio.ensure_future(student(base, stop, loaded))
        started = time.monotonic()
        statuses = await flood(base, requests, concurrency)
        took = time.monotonic() - started
        stop.set()
        await timing
        await asyncio.sleep(1)          # the log's last lines
        logged = len(lines) - logged_before
    finally:
        load.stop_server(proc)
        shutil.rmtree(folder, ignore_errors=True)
    return {"requests": requests, "concurrency": concurrency, "statuses": dict(statuses),
            "flood_s": round(took, 2), "log_lines_during_flood": logged,
            "page_alone": spread(alone), "page_during_flood": spread(loaded or [float("nan")]),
            "load_average": load.load_average()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=20)
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(run(args.requests, args.concurrency)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
