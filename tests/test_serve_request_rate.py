"""The HTTP request rate per address (``serve --requests-per-second``), driven from outside:
a client keeping no cookies floods ``GET /`` from 127.0.0.1 and is cut off past its burst
with 429 and Retry-After, while a student at 127.0.0.2 is still served; the unit's token
bucket refills at its rate."""
from __future__ import annotations

import asyncio
import time

import pytest

from serve_attack_helpers import stranger
from serve_helpers import load, start, teacher_home
from test_serve_joins import from_address

from radixviz.classroom.limits import RequestRate

RATE = 2                     # requests a second; the burst is 30 s worth (limits.REQUEST_BURST)
FLOOD = 200


async def test_a_request_flood_from_one_address_is_cut_and_another_is_served(tmp_path):
    teacher = teacher_home(tmp_path)
    proc, base = start(teacher, 2, "--requests-per-second", str(RATE))
    flood, student = stranger(), from_address("127.0.0.2")
    burst = RequestRate(RATE).burst
    try:
        began = time.monotonic()
        statuses, waits = [], []
        for _ in range(FLOOD // 8):                # eight at a time, as fast as it is answered
            async def one():
                async with flood.get(base + "/") as response:
                    await response.read()
                    return response.status, response.headers.get("Retry-After")
            for status, wait in await asyncio.gather(*(one() for _ in range(8))):
                statuses.append(status)
                if status == 429:
                    waits.append(wait)
        elapsed = time.monotonic() - began
        served = statuses.count(200)
        # the burst, and what the bucket refilled while the flood ran (nothing more)
        assert burst <= served <= burst + RATE * elapsed + 1, (served, elapsed)
        assert statuses.count(429) == FLOOD - served
        assert waits and all(w is not None and int(w) >= 1 for w in waits)
        async with student.get(base + "/") as response:       # another address: its own bucket
            assert response.status == 200
        async with flood.get(base + "/") as response:          # the flooder still waits
            assert response.status == 429
    finally:
        await flood.close()
        await student.close()
        load.stop_server(proc)


def test_the_bucket_gives_its_burst_then_its_rate():
    rate = RequestRate(5, burst=10)
    assert [rate.wait("10.0.0.1", now=0.0) for _ in range(10)] == [0.0] * 10
    assert rate.wait("10.0.0.1", now=0.0) == pytest.approx(0.2)
    assert rate.wait("10.0.0.2", now=0.0) == 0.0                 # another address
    assert rate.wait("10.0.0.1", now=0.2) == 0.0                 # one refilled
    assert rate.wait("10.0.0.1", now=0.2) > 0
    # an IPv6 client counts by its /64, whatever address it picks in it
    v6 = RequestRate(1, burst=1)
    assert v6.wait("2001:db8::1", now=0.0) == 0.0
    assert v6.wait("2001:db8::2", now=0.0) > 0
